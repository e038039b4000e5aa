// Storage as a user of a one-node cluster without a provisioner would have it: a StorageClass of
// its own (kubernetes.io/no-provisioner, volumeBindingMode WaitForFirstConsumer, so a claim binds
// when its pod is scheduled) and hostPath PersistentVolumes of that class under a temporary
// directory of this machine, where the test bed's one node (tailor-node) runs its kubelet. The
// volumes are Retain: a released volume is never bound again, so a case asks for as many as the
// claims it will ever create. kube-controller-manager (full mode) and the scheduler bind them.
//
// Owns: the StorageClass, the PersistentVolumes (labelled with the class) and the directory it
// makes; remove() takes them all away.
// Must not: touch claims (the CloneSet under test owns them) or any other StorageClass or volume.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeClient } from '../../../src/runtime/kube-client.js';
import { isNotFound } from '../../../src/runtime/kube-client.js';

const STORAGE_LABEL = 'tailor.dev/test-storage';

export interface LocalStorage {
  /** The StorageClass the claims name. */
  readonly className: string;
  /** Deletes the volumes, the class and the directory (claims must be gone or going). */
  remove(): Promise<void>;
}

export async function createLocalStorage(
  client: KubeClient,
  className: string,
  volumes: number,
  capacity = '5Gi',
): Promise<LocalStorage> {
  const dir = mkdtempSync(join(tmpdir(), `${className}-`));
  await client.create('/apis/storage.k8s.io/v1/storageclasses', {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name: className, labels: { [STORAGE_LABEL]: className } },
    provisioner: 'kubernetes.io/no-provisioner',
    volumeBindingMode: 'WaitForFirstConsumer',
    reclaimPolicy: 'Retain',
  });
  for (let i = 0; i < volumes; i++) {
    await client.create('/api/v1/persistentvolumes', {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: `${className}-${i}`, labels: { [STORAGE_LABEL]: className } },
      spec: {
        capacity: { storage: capacity },
        accessModes: ['ReadWriteOnce'],
        persistentVolumeReclaimPolicy: 'Retain',
        storageClassName: className,
        hostPath: { path: join(dir, String(i)), type: 'DirectoryOrCreate' },
      },
    });
  }
  return {
    className,
    async remove() {
      const ignoreGone = (err: unknown): void => {
        if (!isNotFound(err)) throw err;
      };
      const listed = await client.list<{ metadata?: { name?: string } }>('/api/v1/persistentvolumes', {
        labelSelector: `${STORAGE_LABEL}=${className}`,
      });
      for (const pv of listed.items)
        await client.delete(`/api/v1/persistentvolumes/${pv.metadata?.name}`).catch(ignoreGone);
      await client.delete(`/apis/storage.k8s.io/v1/storageclasses/${className}`).catch(ignoreGone);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
