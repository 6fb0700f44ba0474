import type { Store } from '../store/db.ts';
import { SharedStateRepository } from '../store/repositories/shared-state-repository.ts';

const PREFIX = 'provider_down:';

/**
 * Which providers are down (a sandbox outage). In memory for the checks on the request path; on a
 * database several instances share, each change is written there too and `sync` (at the start of
 * every request) reads the fleet's, so an outage set on one instance holds on all.
 */
export class ProviderHealth {
  private down = new Set<string>();
  private readonly repo = new SharedStateRepository();

  /** `shared`: the store of a database several instances share. */
  constructor(private readonly shared?: Store) {}

  async setDown(name: string, isDown: boolean): Promise<void> {
    if (isDown) this.down.add(name);
    else this.down.delete(name);
    if (this.shared) await this.repo.put(this.shared, PREFIX + name, isDown ? 'down' : 'up');
  }

  isDown(name: string): boolean {
    return this.down.has(name);
  }

  /** Reads the fleet's outages (a no-op unless shared). */
  async sync(): Promise<void> {
    if (!this.shared) return;
    const rows = await this.repo.withPrefix(this.shared, PREFIX);
    this.down = new Set(rows.filter((r) => r.value === 'down').map((r) => r.name.slice(PREFIX.length)));
  }
}
