import { inject, type ProvidedContext } from 'vitest';

/**
 * What the acceptance set-up provided (the installed bin, where uses are recorded); undefined
 * outside Vitest, since the bench starts Hearth through the same helpers.
 */
export function provided<K extends keyof ProvidedContext>(key: K): ProvidedContext[K] | undefined {
  try {
    return inject(key);
  } catch {
    return undefined;
  }
}
