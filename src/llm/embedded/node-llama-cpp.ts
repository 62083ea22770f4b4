/**
 * The few parts of node-llama-cpp (3.22.1) Hearth uses, declared here so that neither tsc nor the
 * esbuild bundle needs the package: it is in no dependency list (about 250 MB with its binaries,
 * and its macOS/Windows platform packages break `npm ci` on registries that lack them), so a plain
 * install type-checks, builds and runs; the user adds it only to run a GGUF file in process.
 *
 * The shapes follow node-llama-cpp's own .d.ts files (dist/types.d.ts, bindings/Llama.d.ts,
 * evaluator/LlamaChat/LlamaChat.d.ts); they are narrowed to what Hearth calls. The embedded tests
 * run against the real package, so a drift in these shapes fails there.
 */

const NODE_LLAMA_CPP_VERSION = '3.22.1';
const INSTALL = `\`npm install node-llama-cpp@${NODE_LLAMA_CPP_VERSION}\` (next to Hearth; for a global Hearth, \`npm install -g node-llama-cpp@${NODE_LLAMA_CPP_VERSION}\`)`;

export type ChatModelFunctionCall = {
  type: 'functionCall';
  name: string;
  params: unknown;
  result: unknown;
};
export type ChatHistoryItem =
  | { type: 'system'; text: string }
  | { type: 'user'; text: string }
  | { type: 'model'; response: Array<string | ChatModelFunctionCall> };
/** The JSON Schema subset node-llama-cpp turns into a grammar; Hearth builds it in history.ts. */
export type GbnfJsonSchema = Record<string, unknown>;
export type ChatModelFunctions = Record<string, { description?: string; params?: GbnfJsonSchema }>;

export interface LlamaGrammar {
  parse(json: string): unknown;
}

export interface GenerateOptions {
  signal?: AbortSignal;
  stopOnAbortSignal?: boolean;
  onTextChunk?: (text: string) => void;
  onToken?: (tokens: readonly unknown[]) => void;
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  seed?: number;
  grammar?: LlamaGrammar;
  functions?: ChatModelFunctions;
}

export interface LlamaChatResponse {
  response: string;
  functionCalls?: ReadonlyArray<{ functionName: string; params: unknown }>;
  metadata: {
    stopReason: 'eogToken' | 'stopGenerationTrigger' | 'functionCalls' | 'maxTokens' | 'abort' | string;
  };
}

export interface LlamaChat {
  generateResponse(history: ChatHistoryItem[], options: GenerateOptions): Promise<LlamaChatResponse>;
}

export interface LlamaContextSequence {
  readonly nextTokenIndex: number;
}

export interface LlamaContext {
  readonly contextSize: number;
  getSequence(): LlamaContextSequence;
}

export interface LlamaEmbeddingContext {
  getEmbeddingFor(text: string): Promise<{ readonly vector: readonly number[] }>;
  dispose(): Promise<void>;
}

export interface LlamaModel {
  createContext(options: { contextSize?: number; threads?: number }): Promise<LlamaContext>;
  createEmbeddingContext(options?: {
    contextSize?: number;
    threads?: number;
  }): Promise<LlamaEmbeddingContext>;
  dispose(): Promise<void>;
}

export interface Llama {
  readonly gpu: false | 'cuda' | 'vulkan' | 'metal';
  readonly buildType: 'localBuild' | 'prebuilt';
  readonly cpuMathCores: number;
  getVramState(): Promise<{ total: number; free: number }>;
  loadModel(options: { modelPath: string }): Promise<LlamaModel>;
  createGrammarForJsonSchema(schema: GbnfJsonSchema): Promise<LlamaGrammar>;
  dispose(): Promise<void>;
}

export interface GgufFileInfo {
  metadata: { general: { architecture: string } } & Record<string, unknown>;
}

export interface NodeLlamaCpp {
  getLlama(options: { build: 'never'; logLevel: unknown; gpu?: false }): Promise<Llama>;
  LlamaLogLevel: { error: unknown };
  LlamaChat: new (options: { contextSequence: LlamaContextSequence }) => LlamaChat;
  readGgufFileInfo(
    path: string,
    options: { readTensorInfo: boolean; logWarnings: boolean },
  ): Promise<GgufFileInfo>;
}

/**
 * node-llama-cpp, or what to tell the user when it cannot be imported (not installed, or a broken
 * install). The specifier is a variable so that tsc and esbuild leave the import to run time
 * (esbuild also lists it as external).
 */
export async function importNodeLlamaCpp(): Promise<NodeLlamaCpp | { missing: string }> {
  const specifier = 'node-llama-cpp';
  try {
    return (await import(specifier)) as NodeLlamaCpp;
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND')
      return { missing: `node-llama-cpp is not installed: install it with ${INSTALL}` };
    return {
      missing: `node-llama-cpp cannot be loaded (${(err as Error).message}): reinstall it with ${INSTALL}`,
    };
  }
}

export function isInstalled(lib: NodeLlamaCpp | { missing: string }): lib is NodeLlamaCpp {
  return !('missing' in lib);
}

/**
 * node-llama-cpp and a model file loaded, or what to tell the user. `build: 'never'`: Hearth never
 * compiles llama.cpp behind the user's back; the prebuilt binaries come with the npm package.
 * `threads` is one per physical core: node-llama-cpp's default (its maxThreads) is twice that, and
 * spinning threads on shared cores made the first token ten times slower on a busy 2-core machine.
 */
export async function loadModelFile(options: {
  modelPath: string;
  cpuOnly?: boolean;
  threads?: number;
}): Promise<
  | { lib: NodeLlamaCpp; llama: Llama; model: LlamaModel; threads: number }
  | { error: string; notInstalled?: true }
> {
  const lib = await importNodeLlamaCpp();
  if (!isInstalled(lib))
    return {
      error: `Running ${options.modelPath} needs node-llama-cpp. ${lib.missing}.`,
      notInstalled: true,
    };
  try {
    const llama = await lib.getLlama({
      build: 'never',
      logLevel: lib.LlamaLogLevel.error,
      ...(options.cpuOnly ? { gpu: false as const } : {}),
    });
    const model = await llama.loadModel({ modelPath: options.modelPath });
    return { lib, llama, model, threads: options.threads ?? llama.cpuMathCores };
  } catch (err) {
    return { error: `Cannot load the model ${options.modelPath}: ${(err as Error).message}` };
  }
}
