// Types of test/support/cluster/bed.js (plain JS so that the global setup can load it).
export declare const REPO: string;
export declare const CLUSTER_DIR: string;
export declare function kubeconfigPath(): string;
export declare const PKI_DIR: string;
export declare const LOG_DIR: string;
export declare function pidFile(name: string): string;
export declare const APISERVER_HOST: string;
export declare const APISERVER_PORT: number;
