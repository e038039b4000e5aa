// Types of test/support/cluster/kube-version.js (plain JS so that Jest's config can load it).
export declare function kubeVersions(): string[];
export declare function kubeVersion(): string;
export declare function controlPlaneVersion(): string;
export declare function kubeBinary(name: string): string;
export declare function gateOffProfileRuns(version?: string): boolean;
