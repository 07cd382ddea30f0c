/**
 * A cluster-bound endpoint as the mock stores it (the API renders it as an `Endpoint`). Its own
 * file, so the event log and hub can name it without importing the endpoint routes.
 */
export interface StoredEndpoint {
  id: string;
  /** Canonical URL, always with the port: `http://a.b` is stored as `http://a.b:80`. */
  url: string;
  scheme: 'http' | 'tcp';
  name: string;
  namespace: string;
  port: number;
  /** The account's app the endpoint forwards to; when set, an online tunnel serves the endpoint. */
  upstream_url?: string;
  pooling_enabled: boolean;
  bindings: string[];
  description: string;
  /** Absent until set; once set (even to "") it is shown. */
  metadata?: string;
  created_at: string;
  updated_at: string;
  /** Id of the tunnel (in the account's `tunnels` collection) serving this endpoint. */
  tunnel_id?: string;
}

declare module '../store/account-state.js' {
  interface CollectionTypes {
    endpoints: StoredEndpoint;
  }
}
