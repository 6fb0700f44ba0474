import type { Store } from '../store/db.ts';
import { SharedStateRepository } from '../store/repositories/shared-state-repository.ts';

/** The fleet's provider settings in shared_state: outages (one row each) and the rails' tuning. */
/** Every row of the providers' settings starts so (readFleetState reads them by it too). */
export const PROVIDER_STATE_PREFIX = 'provider_';
const PREFIX = PROVIDER_STATE_PREFIX;
const DOWN = 'provider_down:';
const TUNING = 'provider_tuning';

/** One provider setting as shared_state keeps it: an outage (`provider_down:<name>`) or the tuning. */
export interface ProviderStateRow {
  name: string;
  value: string;
}

/**
 * Which providers are down (a sandbox outage), and the sandbox's tuning of the rails (PUT
 * /api/v1/sandbox/rails). In memory for the checks on the request path; on a database several
 * instances share, each change is written there too and `sync` (at the start of every request)
 * reads the fleet's, in one statement, so an outage or a tuning set on one instance holds on all.
 */
export class ProviderHealth {
  private down = new Set<string>();
  /** The tuning as last written or read (JSON), null for none: the configuration. */
  private tuning: string | null = null;
  private tuningListener: ((tuning: unknown) => void) | undefined;
  private readonly changeListeners: ((rows: ProviderStateRow[]) => void)[] = [];
  private readonly repo = new SharedStateRepository();

  /** `shared`: the store of a database several instances share. */
  constructor(private readonly shared?: Store) {}

  async setDown(name: string, isDown: boolean): Promise<void> {
    if (isDown) this.down.add(name);
    else this.down.delete(name);
    this.changed();
    if (this.shared) await this.repo.put(this.shared, DOWN + name, isDown ? 'down' : 'up');
  }

  isDown(name: string): boolean {
    return this.down.has(name);
  }

  /** Keeps the rails' tuning for the fleet (the router applied it here already). */
  async setTuning(tuning: unknown): Promise<void> {
    this.tuning = JSON.stringify(tuning);
    this.changed();
    if (this.shared) await this.repo.put(this.shared, TUNING, this.tuning);
  }

  /** Hears each tuning another instance set, as sync reads it (the router applies it). */
  onTuning(listener: (tuning: unknown) => void): void {
    this.tuningListener = listener;
  }

  /** Hears every outage or tuning set here, as the rows `adopt` takes (the job thread's copy follows). */
  onChange(listener: (rows: ProviderStateRow[]) => void): void {
    this.changeListeners.push(listener);
  }

  /** The outages and tuning as rows, in the shape they are stored and adopted in. */
  rows(): ProviderStateRow[] {
    const rows: ProviderStateRow[] = [...this.down].map((name) => ({ name: DOWN + name, value: 'down' }));
    if (this.tuning !== null) rows.push({ name: TUNING, value: this.tuning });
    return rows;
  }

  private changed(): void {
    if (this.changeListeners.length === 0) return;
    const rows = this.rows();
    for (const listener of this.changeListeners) listener(rows);
  }

  /** Reads the fleet's outages and tuning (a no-op unless shared). */
  async sync(): Promise<void> {
    if (!this.shared) return;
    this.adopt(await this.repo.withPrefix(this.shared, PREFIX));
  }

  /** Takes the fleet's outages and tuning from its `provider_…` rows (read with the rest of the fleet's state). */
  adopt(rows: readonly ProviderStateRow[]): void {
    this.down = new Set(rows.filter((r) => r.name.startsWith(DOWN) && r.value === 'down').map((r) => r.name.slice(DOWN.length)));
    const tuning = rows.find((r) => r.name === TUNING)?.value ?? null;
    if (tuning !== this.tuning) {
      this.tuning = tuning;
      this.tuningListener?.(tuning === null ? {} : JSON.parse(tuning));
    }
  }
}
