// Starts the InPlaceStatefulSet controller: the one workload engine (workload/setup.ts) with the
// kind's profile (kind.ts). Must not: decide anything about a set.
import type { Manager } from '../runtime/manager.js';
import { setupWorkloadController, type WorkloadControllerOptions } from '../workload/setup.js';
import type { WorkloadReconciler } from '../workload/reconciler.js';
import { INPLACESTATEFULSET } from './kind.js';

export const setupInPlaceStatefulSetController = (
  manager: Manager,
  options: WorkloadControllerOptions,
): WorkloadReconciler => setupWorkloadController(manager, INPLACESTATEFULSET, options);
