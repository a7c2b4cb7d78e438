import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

/**
 * The certificates of one mutual-TLS setup, made fresh for a test run: the BCB's security manual puts
 * every API Pix call behind a client certificate the PSP issued, so the simulator refuses anything else.
 */
export interface PixCertificates {
  dir: string;
  /** The PSP's CA: it signed the server certificate and the client certificate. */
  caFile: string;
  /** For `localhost` and 127.0.0.1; usable as a client certificate too, for the PSP calling webhooks. */
  serverCertFile: string;
  serverKeyFile: string;
  /** The certificate the PSP gave its client (the gateway). */
  clientCertFile: string;
  clientKeyFile: string;
  /** A client certificate from another CA: a TLS handshake with it must fail. */
  strangerCertFile: string;
  strangerKeyFile: string;
}

const run = promisify(execFile);

/**
 * One openssl config for every certificate, so nothing depends on the machine's openssl.cnf (whose
 * default extensions would clash with ours). Extended key usages matter: Node checks them.
 */
const OPENSSL_CONFIG = `
[req]
distinguished_name = dn
prompt = no
[dn]
CN = unused
[ca_ext]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
[server_ext]
basicConstraints = CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = serverAuth,clientAuth
subjectAltName = DNS:localhost,IP:127.0.0.1
authorityKeyIdentifier = keyid
[client_ext]
basicConstraints = CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = clientAuth
authorityKeyIdentifier = keyid
`;

/** EC P-256 keys: generated in milliseconds, where RSA would cost a test run seconds. */
const NEW_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
const DAYS = ['-days', '2'];

/** Creates the CAs and certificates with the openssl CLI in `dir` (a new temporary folder when absent). */
export async function makeCertificates(dir?: string): Promise<PixCertificates> {
  const folder = dir ?? (await mkdtemp(join(tmpdir(), 'api-pix-certs-')));
  const config = join(folder, 'openssl.cnf');
  await writeFile(config, OPENSSL_CONFIG);
  const file = (name: string) => join(folder, name);
  await Promise.all([
    makeCa(config, file('ca'), 'API Pix test PSP CA'),
    makeCa(config, file('stranger-ca'), 'Someone else CA'),
  ]);
  await Promise.all([
    makeLeaf(config, file('server'), file('ca'), 'localhost', 'server_ext'),
    makeLeaf(config, file('client'), file('ca'), 'payment-gateway', 'client_ext'),
    makeLeaf(config, file('stranger'), file('stranger-ca'), 'payment-gateway', 'client_ext'),
  ]);
  return {
    dir: folder,
    caFile: file('ca.crt'),
    serverCertFile: file('server.crt'),
    serverKeyFile: file('server.key'),
    clientCertFile: file('client.crt'),
    clientKeyFile: file('client.key'),
    strangerCertFile: file('stranger.crt'),
    strangerKeyFile: file('stranger.key'),
  };
}

/** A self-signed CA: `<base>.crt` and `<base>.key`. */
async function makeCa(config: string, base: string, name: string): Promise<void> {
  await run('openssl', ['req', '-x509', '-config', config, '-extensions', 'ca_ext', ...NEW_KEY, ...DAYS, '-subj', `/CN=${name}`, '-keyout', `${base}.key`, '-out', `${base}.crt`]);
}

/** A certificate signed by the CA at `caBase`, with the extensions of config section `extensions`. */
async function makeLeaf(config: string, base: string, caBase: string, commonName: string, extensions: string): Promise<void> {
  await run('openssl', ['req', '-new', '-config', config, ...NEW_KEY, '-subj', `/CN=${commonName}`, '-keyout', `${base}.key`, '-out', `${base}.csr`]);
  await run('openssl', [
    'x509', '-req', '-in', `${base}.csr`, '-CA', `${caBase}.crt`, '-CAkey', `${caBase}.key`,
    '-set_serial', `0x${randomBytes(8).toString('hex')}`, ...DAYS, '-extfile', config, '-extensions', extensions, '-out', `${base}.crt`,
  ]);
}
