import { readFileSync } from 'node:fs';
import os from 'node:os';

/** The machine's memory as a port: what waits on it (the pipeline's memory gate) takes one, tests inject theirs. */
export interface MemoryPort {
  /** Bytes a new process could use now without swapping. */
  available(): number;
  total(): number;
}

/**
 * Linux's MemAvailable counts reclaimable page cache, which a model file just unloaded sits in;
 * `os.freemem()` there would report the machine as full long after the model is gone. Elsewhere
 * (macOS, Windows) `os.freemem()` is the figure the OS gives.
 */
export const systemMemory: MemoryPort = {
  available() {
    try {
      const match = /^MemAvailable:\s+(\d+)\s*kB/m.exec(readFileSync('/proc/meminfo', 'utf8'));
      if (match) return Number(match[1]) * 1024;
    } catch {
      // not Linux
    }
    return os.freemem();
  },
  total: () => os.totalmem(),
};
