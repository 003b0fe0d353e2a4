/** What a decoy HTTP API answers, as plain values: the route writes it out unchanged. */
export interface HttpAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Who sent a decoy HTTP call, as the route saw it. */
export interface HttpCaller {
  ip: string;
  userAgent: string;
  requestId: string | null;
}
