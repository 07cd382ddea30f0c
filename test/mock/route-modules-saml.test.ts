import { X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestMock, type TestMock } from '../helpers/mock-api.js';
import { IDP_METADATA, expectApiError } from './edges-fixtures.js';

let m: TestMock;
beforeAll(async () => {
  m = await startTestMock();
});
afterAll(async () => {
  await m.close();
});

describe('SAML module: server-generated service provider fields', () => {
  it('derives public URLs from the edge and route and signs with a real, stable certificate', async () => {
    const edge = await m.client.httpsEdges.create({
      hostports: ['sso.example.com:443', 'alt.example.com:443'],
    });
    const route = await m.client.httpsEdgeRoutes.create(edge.id, {
      match_type: 'path_prefix',
      match: '/',
      saml: { idp_metadata: IDP_METADATA },
    });
    const saml = route.saml!;
    const base = `https://sso.example.com/saml/${route.id}`;
    expect(saml).toMatchObject({
      enabled: true,
      idp_metadata: IDP_METADATA,
      entity_id: `${base}/metadata`,
      metadata_url: `${base}/metadata`,
      assertion_consumer_service_url: `${base}/acs`,
      single_logout_url: `${base}/slo`,
      nameid_format: 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent',
    });
    expect(saml.entity_id).toBe(saml.metadata_url);
    const cert = new X509Certificate(saml.request_signing_certificate_pem);
    expect(cert.subject).toContain('sso.example.com');
    expect(cert.publicKey.asymmetricKeyDetails?.modulusLength).toBe(2048);

    // Stable across reads, through every view.
    expect(await m.client.httpsEdgeRoutes.modules.saml.get(edge.id, route.id)).toEqual(saml);
    expect((await m.client.httpsEdges.get(edge.id)).routes[0]!.saml).toEqual(saml);
    expect((await m.client.httpsEdgeRoutes.update(edge.id, route.id, { description: 'x' })).saml).toEqual(
      saml,
    );

    // Setting the module again generates a new certificate.
    const replaced = await m.client.httpsEdgeRoutes.modules.saml.replace(edge.id, route.id, {
      idp_metadata: IDP_METADATA,
      nameid_format: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
    });
    expect(replaced.request_signing_certificate_pem).not.toBe(saml.request_signing_certificate_pem);
    expect(replaced.nameid_format).toBe('urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress');
    expect(replaced.entity_id).toBe(saml.entity_id);
  });

  it('uses a non-default port and a stand-in host for an edge without hostports', async () => {
    const withPort = await m.client.httpsEdges.create({ hostports: ['sso2.example.com:8443'] });
    const r1 = await m.client.httpsEdgeRoutes.create(withPort.id, {
      match_type: 'path_prefix',
      match: '/',
      saml: { idp_metadata: IDP_METADATA },
    });
    expect(r1.saml?.assertion_consumer_service_url).toBe(`https://sso2.example.com:8443/saml/${r1.id}/acs`);
    const bare = await m.client.httpsEdges.create();
    const r2 = await m.client.httpsEdgeRoutes.create(bare.id, {
      match_type: 'path_prefix',
      match: '/',
      saml: { idp_metadata: IDP_METADATA },
    });
    expect(r2.saml?.metadata_url).toMatch(/^https:\/\/edghts-[0-9a-z]{26}\.edges\.invalid\/saml\//);
  });

  it.each([
    'urn:oasis:names:tc:SAML:2.0:nameid-format:transient',
    'urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified',
  ])('accepts nameid_format %s', async (nameid_format) => {
    const edge = await m.client.httpsEdges.create();
    const r = await m.client.httpsEdgeRoutes.create(edge.id, {
      match_type: 'path_prefix',
      match: '/',
      saml: { idp_metadata: IDP_METADATA, nameid_format },
    });
    expect(r.saml?.nameid_format).toBe(nameid_format);
  });

  it('refuses generated fields on input, on every write path', async () => {
    const edge = await m.client.httpsEdges.create();
    const route = await m.client.httpsEdgeRoutes.create(edge.id, { match_type: 'path_prefix', match: '/' });
    const body = { idp_metadata: IDP_METADATA, entity_id: 'https://evil.example.com' };
    const err = await expectApiError(
      m.client.httpsEdgeRoutes.create(edge.id, {
        match_type: 'exact_path',
        match: '/s',
        saml: body,
      }),
      400,
      'ERR_380',
    );
    expect(err.details['field']).toBe('body.saml.entity_id');
    await expectApiError(m.client.httpsEdgeRoutes.update(edge.id, route.id, { saml: body }), 400, 'ERR_380');
    await expectApiError(
      m.client.httpsEdgeRoutes.modules.saml.replace(edge.id, route.id, body),
      400,
      'ERR_380',
    );
    expect(await m.client.httpsEdges.get(edge.id)).toMatchObject({ routes: [route] });
  });
});
