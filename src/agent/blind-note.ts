/** What the model and the user are told when images meet a model that cannot see. */
export function blindNote(model: string): string {
  return `model ${model} does not accept images; load a vision model (such as qwen2.5-vl, gemma3 or llava) to use them`;
}
