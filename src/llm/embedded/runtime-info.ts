/** What `hearth doctor` says about the in-process runtime: installed or not, its binary, threads, memory. */
import { freemem, totalmem } from 'node:os';
import { importNodeLlamaCpp, isInstalled } from './node-llama-cpp.js';

export type EmbeddedRuntimeInfo =
  | { installed: false; missing: string }
  | { installed: true; error: string }
  | { installed: true; binary: string; threads: number; memory: string };

const gib = (bytes: number) => `${(bytes / 1024 ** 3).toFixed(1)} GiB`;

/** Loads the native binary (about a second) only when node-llama-cpp is installed. */
export async function embeddedRuntimeInfo(): Promise<EmbeddedRuntimeInfo> {
  const lib = await importNodeLlamaCpp();
  if (!isInstalled(lib)) return { installed: false, missing: lib.missing };
  try {
    const llama = await lib.getLlama({ build: 'never', logLevel: lib.LlamaLogLevel.error });
    const binary = `${llama.gpu === false ? 'CPU' : llama.gpu === 'cuda' ? 'CUDA' : llama.gpu === 'metal' ? 'Metal' : 'Vulkan'} (${llama.buildType})`;
    let memory = `RAM ${gib(freemem())} free of ${gib(totalmem())}`;
    if (llama.gpu !== false) {
      const vram = await llama.getVramState();
      memory += `, VRAM ${gib(vram.free)} free of ${gib(vram.total)}`;
    }
    const threads = llama.cpuMathCores;
    await llama.dispose();
    return { installed: true, binary, threads, memory };
  } catch (err) {
    return { installed: true, error: (err as Error).message };
  }
}
