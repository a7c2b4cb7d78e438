'use strict';
/**
 * Preloaded (-r) into the service when the benchmark profiles it (BENCH_CPU_PROF): on SIGTERM the process
 * exits normally, so that node's --cpu-prof writes its .cpuprofile (a process killed by a signal writes none).
 */
process.on('SIGTERM', () => setTimeout(() => process.exit(0), 200));
