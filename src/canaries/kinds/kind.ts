import type { Decoy, DecoySettings } from '../decoys';
import type { HitSource } from '../threats.repository';

/** A file the owner downloads and plants: built once at planting, stored with the canary. */
export interface Artifact {
  filename: string;
  contentType: string;
  body: Buffer;
}

/** What a planting request may add for the kinds that need it (checked by the kind itself). */
export interface PlantOptions {
  /** fast_redirect / slow_redirect: where the visitor is sent after the hit. */
  redirectUrl?: string;
  /** web_image: the owner's own image (PNG, GIF or JPEG bytes); a default when absent. */
  image?: Buffer;
  /** cloned_website: the origin the page belongs on; served from any other, it fires. */
  siteUrl?: string;
}

/** A planted decoy and, for the kinds that have one, the file that carries it. */
export interface Planted extends Decoy {
  artifact?: Artifact;
  /** fast_redirect / slow_redirect: the destination, read again when the link is followed. */
  redirectUrl?: string;
}

/**
 * One canary kind: how its decoy (and artifact) is made, which tokens it carries (`Decoy.tokens`),
 * how it is explained and weighed, and how a hit's platform is read. `src/canaries/kinds/index.ts`
 * lists them; a new kind is one such module and one line there.
 */
export interface KindModule {
  /** `how_to_use` on every answer: what fires it and what does not. */
  howToUse: string;
  /** The alert's risk base (0-100), what fired ("A decoy Word document") and what to do. */
  risk: { base: number; what: string; action: string };
  /**
   * Who is heard when it fires, when that is not the attacker: the DNS resolver that asked, or the
   * mail server that delivered. The alert then says so.
   */
  relay?: 'dns' | 'mail';
  make(settings: DecoySettings, options: PlantOptions): Planted;
  /** The client a hit reveals (an alert's `platform` when the owner did not say); by default the user agent's. */
  platform?(source: HitSource): string;
}

/** What a client with no user agent is called; browsers by their family rather than "Mozilla". */
export function platformOf(userAgent: string): string {
  if (!userAgent) return 'unknown client';
  if (userAgent.startsWith('Mozilla/')) return 'web browser';
  return userAgent.split(/[/\s]/)[0]!.slice(0, 60);
}
