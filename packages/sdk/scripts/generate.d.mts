export declare const CONTRACT: URL;
export declare const GENERATED: URL;
export declare function generate(): Promise<string>;
