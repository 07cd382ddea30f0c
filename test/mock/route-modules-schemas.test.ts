import { describe, expect, it } from 'vitest';
import { HTTPSEdge, HTTPSEdgeList } from '../../src/api/schemas/edge.js';
import { HTTPSEdgeRoute, HTTPSEdgeRouteCreate } from '../../src/api/schemas/route.js';
import { ROUTE_MODULE_NAMES } from '../../src/api/schemas/modules/index.js';

const route = {
  edge_id: 'edghts_A',
  id: 'edghtsrt_B',
  uri: 'https://api.example.com/edges/https/edghts_A/routes/edghtsrt_B',
  created_at: '2024-01-01T00:00:00Z',
  match_type: 'path_prefix',
  match: '/',
  policy: null, // a legacy field real services still send
  request_headers: {
    enabled: true,
    add: { 'X-Custom-Header': 'v', 'x-Mixed-CASE': 'w' },
    remove: [],
    future: 1,
  },
  oauth: { enabled: true, provider: { github: { teams: ['a/b'] }, some_new_provider: {} } },
};

describe('response schemas', () => {
  it('tolerate unknown fields, read absent modules as null and pass header maps through untouched', () => {
    const parsed = HTTPSEdgeRoute.parse(route);
    expect(parsed.request_headers?.add).toEqual({ 'X-Custom-Header': 'v', 'x-Mixed-CASE': 'w' });
    expect(parsed.oauth?.provider.github?.teams).toEqual(['a/b']);
    for (const n of ROUTE_MODULE_NAMES.filter((n) => n !== 'request_headers' && n !== 'oauth')) {
      expect(parsed[n]).toBeNull();
    }
    const edge = HTTPSEdge.parse({
      id: 'edghts_A',
      uri: 'u',
      created_at: 't',
      hostports: ['a.example.com:443'],
      mutual_tls: null,
      tls_termination: { enabled: true, terminate_at: 'edge', min_version: '1.3', extra: true },
      routes: [route],
      brand_new_field: 'x',
    });
    expect(edge.routes[0]!.request_headers?.add['X-Custom-Header']).toBe('v');
    expect(
      HTTPSEdgeList.parse({ https_edges: [edge], uri: 'u', next_page_uri: null }).https_edges,
    ).toHaveLength(1);
  });

  it('request schemas are strict', () => {
    expect(HTTPSEdgeRouteCreate.safeParse({ match_type: 'path_prefix', match: '/', extra: 1 }).success).toBe(
      false,
    );
    expect(HTTPSEdgeRouteCreate.safeParse({ match_type: 'path_prefix', match: '/' }).success).toBe(true);
  });
});
