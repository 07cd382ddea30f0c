import type { KubeConfig } from '@kubernetes/client-node';
import { z } from 'zod';
import { isAlreadyExists, isConflict, isNotFound } from '../../kube/errors.js';
import { KubeObjectSchema, type KubeObject } from '../../kube/objects.js';
import { KubeTransport } from '../../kube/transport.js';
import { rfc3339 } from './pod-status.js';

/**
 * What a node agent asks of the API server, over HTTP as a kubelet does: register its Node, bind
 * a pod to it (pods/binding, the scheduler's write), read a pod and the ConfigMaps and Secrets it
 * refers to, write pods/status, and remove a pod whose process has exited (grace 0, uid
 * precondition: never a successor of the same name). Thin: no decision is made here.
 */

const AnyObject = z.looseObject({});
const podPath = (namespace: string, name: string): string =>
  `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}`;

export class NodeApi {
  readonly transport: KubeTransport;

  constructor(kubeConfig: KubeConfig) {
    this.transport = new KubeTransport(kubeConfig, { timeoutMs: 15_000 });
  }

  /** The Node object, Ready, at 127.0.0.1 (an existing one is kept). */
  async registerNode(nodeName: string): Promise<void> {
    await this.transport
      .json(
        {
          method: 'POST',
          path: '/api/v1/nodes',
          body: {
            apiVersion: 'v1',
            kind: 'Node',
            metadata: { name: nodeName, labels: { 'kubernetes.io/hostname': nodeName } },
          },
        },
        AnyObject,
      )
      .catch((err: unknown) => {
        if (!isAlreadyExists(err)) throw err;
      });
    const now = rfc3339(Date.now());
    await this.transport.json(
      {
        method: 'PATCH',
        path: `/api/v1/nodes/${encodeURIComponent(nodeName)}/status`,
        contentType: 'application/merge-patch+json',
        body: {
          status: {
            conditions: [
              {
                type: 'Ready',
                status: 'True',
                reason: 'KubeletReady',
                lastHeartbeatTime: now,
                lastTransitionTime: now,
              },
            ],
            addresses: [{ type: 'InternalIP', address: '127.0.0.1' }],
            capacity: { cpu: '2', memory: '24Gi', pods: '110' },
            allocatable: { cpu: '2', memory: '24Gi', pods: '110' },
          },
        },
      },
      AnyObject,
    );
  }

  async bind(namespace: string, name: string, nodeName: string): Promise<void> {
    await this.transport.json(
      {
        method: 'POST',
        path: `${podPath(namespace, name)}/binding`,
        body: {
          apiVersion: 'v1',
          kind: 'Binding',
          metadata: { name, namespace },
          target: { apiVersion: 'v1', kind: 'Node', name: nodeName },
        },
      },
      AnyObject,
    );
  }

  async pod(namespace: string, name: string): Promise<KubeObject | undefined> {
    try {
      return await this.transport.json({ path: podPath(namespace, name) }, KubeObjectSchema);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async read(
    plural: 'configmaps' | 'secrets',
    namespace: string,
    name: string,
  ): Promise<KubeObject | undefined> {
    try {
      return await this.transport.json(
        { path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/${plural}/${encodeURIComponent(name)}` },
        KubeObjectSchema,
      );
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /**
   * Replaces the status of the pod with this uid, built from its current object (a conflict is
   * read again and retried). False when the pod is gone or another pod now has the name.
   */
  async writeStatus(
    namespace: string,
    name: string,
    uid: string,
    status: (pod: KubeObject) => Record<string, unknown>,
  ): Promise<boolean> {
    for (let attempt = 0; ; attempt++) {
      const pod = await this.pod(namespace, name);
      if (!pod || pod.metadata.uid !== uid) return false;
      try {
        await this.transport.json(
          {
            method: 'PUT',
            path: `${podPath(namespace, name)}/status`,
            body: { ...pod, status: status(pod) },
          },
          AnyObject,
        );
        return true;
      } catch (err) {
        if (!isConflict(err) || attempt >= 4) throw err;
      }
    }
  }

  /** Removes the pod object now (its process has exited); already gone is fine. */
  async remove(namespace: string, name: string, uid: string): Promise<void> {
    await this.transport
      .json(
        {
          method: 'DELETE',
          path: podPath(namespace, name),
          body: { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0, preconditions: { uid } },
        },
        AnyObject,
      )
      .catch(() => undefined);
  }
}
