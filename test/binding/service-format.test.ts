import { describe, expect, it } from 'vitest';
import { ENDPOINT_ID_ANNOTATION, ENDPOINT_IDS_ANNOTATION } from '../../src/binding/identity.js';
import {
  formatEndpointIdsAnnotation,
  parseEndpointIdsAnnotation,
  servedEndpointIds,
} from '../../src/binding/service-format.js';

describe('the endpoint-ids annotation', () => {
  it('round-trips ids in their order', () => {
    const ids = ['ep_old', 'ep_NEW', 'ep_x'];
    const text = formatEndpointIdsAnnotation(ids);
    expect(text).toBe('["ep_old","ep_NEW","ep_x"]');
    expect(parseEndpointIdsAnnotation(text)).toEqual(ids);
  });

  it.each([
    ['missing', undefined],
    ['not JSON', '[ep_a'],
    ['not an array', '{"0":"ep_a"}'],
    ['an array with a non-string', '["ep_a", 7]'],
  ])('holds no ids when %s', (_what, text) => {
    expect(parseEndpointIdsAnnotation(text)).toEqual([]);
  });

  it("servedEndpointIds: an internal Service's endpoint-id, else an alias Service's endpoint-ids", () => {
    expect(
      servedEndpointIds({ [ENDPOINT_ID_ANNOTATION]: 'ep_a', [ENDPOINT_IDS_ANNOTATION]: '["ep_b"]' }),
    ).toEqual(['ep_a']);
    expect(servedEndpointIds({ [ENDPOINT_IDS_ANNOTATION]: '["ep_b","ep_c"]' })).toEqual(['ep_b', 'ep_c']);
    expect(servedEndpointIds({ team: 'x' })).toEqual([]);
    expect(servedEndpointIds(undefined)).toEqual([]);
  });
});
