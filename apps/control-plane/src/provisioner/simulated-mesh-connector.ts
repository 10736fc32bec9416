import { MeshConnector, MeshLinkRequest } from './mesh-connector.port';

type Action = 'connect' | 'disconnect';

/**
 * The in-process mesh (PROVISIONER_URL unset): a link comes up or goes down after `delayMs`.
 * Tests tell it to fail the next connect or disconnect (`failNext`).
 */
export class SimulatedMeshConnector implements MeshConnector {
  private readonly failing = new Map<Action, string>();
  /** Links up now, by request id (a second connect of one is a no-op, as the port says). */
  readonly links = new Set<string>();

  constructor(public delayMs = 2000) {}

  /** The next `action` fails with `reason` (once). */
  failNext(action: Action, reason = `simulated ${action} failure`): void {
    this.failing.set(action, reason);
  }

  async connectMesh(request: MeshLinkRequest): Promise<void> {
    await this.work('connect');
    this.links.add(request.meshRequestId);
  }

  async disconnectMesh(request: MeshLinkRequest): Promise<void> {
    await this.work('disconnect');
    this.links.delete(request.meshRequestId);
  }

  private async work(action: Action): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, this.delayMs).unref());
    const reason = this.failing.get(action);
    if (reason !== undefined) {
      this.failing.delete(action);
      throw new Error(reason);
    }
  }
}
