/** Types of build-state.mjs for the tests that import it. */
export declare const root: string;
export declare function sourceHash(): string;
export declare function isCurrent(): boolean;
