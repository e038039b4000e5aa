import { clusterTeardown } from './cluster-setup.js';
export default clusterTeardown;
