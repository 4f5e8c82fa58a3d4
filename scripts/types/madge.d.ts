/** The part of madge's public API (lib/api.js) that scripts/check-cycles.ts uses; madge ships no types. */
declare module 'madge' {
  interface MadgeConfig {
    fileExtensions?: string[];
    tsConfig?: string;
    excludeRegExp?: RegExp[];
  }
  interface MadgeInstance {
    /** File → the files it imports, paths relative to the base directory. */
    obj(): Record<string, string[]>;
    circular(): string[][];
  }
  function madge(path: string | string[], config?: MadgeConfig): Promise<MadgeInstance>;
  export = madge;
}
