import { clusterSetup } from './cluster-setup.js';
export default clusterSetup('control-plane');
