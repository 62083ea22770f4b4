import pkg from '../../package.json' with { type: 'json' };

/** The package's version; the bundle inlines it, so printing it reads no file. */
export const version: string = pkg.version;
