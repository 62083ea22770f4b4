import type { AnyTool } from './types.js';

/**
 * Tools that reach a subsystem through a port given when src/setup/ builds them (memory, the
 * pipeline, wake-ups, sub-agents), so neither the loop nor ToolContext knows the subsystem. The
 * catalog holds them `unbound` (a call says what is missing); `bind` makes the same tools over a
 * port, each paired with the unbound tool it stands for, for `ToolRegistry.bind`. Their names,
 * descriptions and schemas are the same either way: requests do not change.
 */
export interface PortedTools<P> {
  readonly unbound: readonly AnyTool[];
  bind(port: P): ReadonlyMap<AnyTool, AnyTool>;
}

/** `make(undefined)` gives the unbound tools; `make(port)` the same tools, in the same order, over `port`. */
export function portedTools<P>(make: (port: P | undefined) => AnyTool[]): PortedTools<P> {
  const unbound = make(undefined);
  return {
    unbound,
    bind(port) {
      const bound = make(port);
      return new Map(unbound.map((tool, i) => [tool, bound[i]!]));
    },
  };
}

/** Both pairings, `later` winning where both bind a tool. */
export function bindAlso(
  earlier: ReadonlyMap<AnyTool, AnyTool> | undefined,
  later: ReadonlyMap<AnyTool, AnyTool>,
): ReadonlyMap<AnyTool, AnyTool> {
  return earlier && earlier.size > 0 ? new Map([...earlier, ...later]) : later;
}
