import { isPlainObject, type Layer, type Provenance } from './layers.js';
import { PROFILE_KEYS } from './model-schema.js';

/** The profile in effect and who chose it, e.g. { name: 'coder', selectedBy: '--model' }. */
export interface SelectedProfile {
  name: string;
  selectedBy: string;
}

/**
 * The profile a model name refers to, if it is one. A name that is not a profile is just a model.
 * `merged` holds the merged config files, where profiles are defined.
 */
export function findProfile(
  merged: Record<string, unknown>,
  name: unknown,
): Record<string, unknown> | undefined {
  if (typeof name !== 'string') return undefined;
  const models = merged.models;
  if (!isPlainObject(models) || !Object.hasOwn(models, name)) return undefined;
  const profile = models[name];
  return isPlainObject(profile) ? profile : undefined;
}

/**
 * A profile's settings as a layer over the top-level keys of the config files. Each key is
 * labelled with the profile and the file that defined that field.
 */
export function profileLayer(name: string, profile: Record<string, unknown>, provenance: Provenance): Layer {
  const values: Record<string, unknown> = {};
  for (const key of PROFILE_KEYS) if (profile[key] !== undefined) values[key] = profile[key];
  return {
    origin: `profile ${name}`,
    values,
    label: (path) => {
      const file = provenance[`models.${name}.${path}`];
      return file ? `profile ${name}, ${file}` : `profile ${name}`;
    },
    nameOf: (path) => `models.${name}.${path}`,
  };
}
