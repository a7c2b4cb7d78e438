'use strict';
/**
 * One autocannon run, in its own process so that the load generator never shares an event loop with the
 * server it measures. Reads its scenario as JSON from argv[2]; prints autocannon's result as JSON on stdout.
 * Requests cycle over the seeded sellers (each a key pair), so that writes spread over several balances.
 */
const autocannon = require('autocannon');

const scenario = JSON.parse(process.argv[2]);
let next = 0;

const instance = autocannon(
  {
    url: scenario.url,
    connections: scenario.connections,
    duration: scenario.duration,
    pipelining: 1,
    timeout: 30,
    requests: [
      {
        method: scenario.method,
        path: scenario.path,
        setupRequest: (request) => {
          const seller = scenario.sellers[next++ % scenario.sellers.length];
          const path = scenario.path.replace(':saleId', String(seller.saleId));
          return {
            ...request,
            path,
            headers: { 'content-type': 'application/json', 'x-api-public-key': seller.publicKey, 'x-api-private-key': seller.privateKey },
            body: scenario.body === undefined ? undefined : JSON.stringify(scenario.body),
          };
        },
      },
    ],
  },
  (error, result) => {
    if (error) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    process.stdout.write(JSON.stringify(result));
  },
);
process.once('SIGINT', () => instance.stop());
