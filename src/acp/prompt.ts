import { fileURLToPath } from 'node:url';
import { type ContentBlock, RequestError } from '@agentclientprotocol/sdk';
import type { NamedPrompt } from '../agent/runtime.js';
import type { ImagePart } from '../llm/types.js';

/** A prompt as a run takes it: the task's text and the images sent with it. */
export interface PromptInput {
  task: string;
  images: ImagePart[];
}

/**
 * Reads an ACP prompt: text as it is; a resource link as the path the model can read; an embedded
 * resource (the editor's selection or file) with its text; an image when the model sees. A prompt
 * that starts with `/skill` runs that skill with the rest as its arguments. Throws a RequestError
 * (invalid params) that says what is wrong.
 */
export function readPrompt(
  blocks: readonly ContentBlock[],
  options: { vision: boolean | undefined; commands: readonly NamedPrompt[]; blindNote: string },
): PromptInput {
  const parts: string[] = [];
  const images: ImagePart[] = [];
  const image = (mimeType: string, base64: string) => {
    if (options.vision === false) throw RequestError.invalidParams(undefined, options.blindNote);
    images.push({ mimeType, base64 });
  };
  for (const block of blocks) {
    switch (block.type) {
      case 'text':
        parts.push(block.text);
        break;
      case 'resource_link':
        parts.push(`[file: ${pathOf(block.uri)}]`);
        break;
      case 'resource': {
        const { resource } = block;
        if ('text' in resource) {
          parts.push(`[file: ${pathOf(resource.uri)}]\n\`\`\`\n${resource.text}\n\`\`\``);
        } else if (resource.mimeType?.startsWith('image/')) {
          image(resource.mimeType, resource.blob);
        } else {
          parts.push(`[file: ${pathOf(resource.uri)} (binary, not included)]`);
        }
        break;
      }
      case 'image':
        image(block.mimeType, block.data);
        break;
      case 'audio':
        throw RequestError.invalidParams(undefined, 'Hearth does not take audio; send text or images.');
    }
  }
  const task = parts.join('\n\n').trim();
  if (!task && images.length === 0) throw RequestError.invalidParams(undefined, 'The prompt is empty.');
  return { task: runCommand(task, options.commands), images };
}

/** `/name args` runs the skill `name` with `args`; anything else is the task as written. */
function runCommand(task: string, commands: readonly NamedPrompt[]): string {
  const match = /^\/(\S+)\s*([\s\S]*)$/.exec(task);
  const command = match && commands.find((c) => c.name === match[1]);
  return command ? command.task(match[2]!.trim()) : task;
}

/** A file URI as a plain path (what the model reads with its tools); other URIs as they are. */
function pathOf(uri: string): string {
  if (!uri.startsWith('file:')) return uri;
  try {
    return fileURLToPath(uri);
  } catch {
    return uri;
  }
}
