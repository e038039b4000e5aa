// Starts the CloneSet controller: the one workload engine (workload/setup.ts) with the CloneSet's
// profile (kind.ts). Must not: decide anything about a CloneSet.
import type { Manager } from '../runtime/manager.js';
import { setupWorkloadController, type WorkloadControllerOptions } from '../workload/setup.js';
import type { WorkloadReconciler } from '../workload/reconciler.js';
import { CLONESET } from './kind.js';

export type CloneSetControllerOptions = WorkloadControllerOptions;

export const setupCloneSetController = (manager: Manager, options: CloneSetControllerOptions): WorkloadReconciler =>
  setupWorkloadController(manager, CLONESET, options);
