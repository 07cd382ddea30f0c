import { describe, expect, it } from 'vitest';
import type { FidelityServer } from './server.js';

/**
 * Field validation (`fieldValidation` Strict/Warn/Ignore, unknown and duplicate fields, wrong
 * types) and the Service validation a client sees: status code, reason, message and the field
 * path of each cause.
 */
export function defineValidation(server: FidelityServer): void {
  describe('field validation', () => {
    const svcs = (ns: string) => `/api/v1/namespaces/${ns}/services`;
    const svc = (name: string, spec: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name },
      spec,
      ...extra,
    });

    it('Strict refuses unknown and duplicate fields with 400, naming their paths; nothing is written', async () => {
      const ns = await server.namespace();
      const r = await server.api(
        'POST',
        `${svcs(ns)}?fieldValidation=Strict`,
        svc('web', { ports: [{ port: 80, bogus: 1 }], bogus: true }, { extra: 1 }),
      );
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ reason: 'BadRequest', code: 400 });
      expect(r.body.message).toBe(
        'Service in version "v1" cannot be handled as a Service: strict decoding error: unknown field "spec.ports[0].bogus", unknown field "spec.bogus", unknown field "extra"',
      );
      expect((await server.api('GET', `${svcs(ns)}/web`)).status).toBe(404);
      const dup = await server.api(
        'POST',
        `${svcs(ns)}?fieldValidation=Strict`,
        '{"metadata":{"name":"dup","labels":{"a":"1","a":"2"}},"spec":{"ports":[{"port":80,"port":81}],"type":"ClusterIP","type":"ClusterIP"}}',
      );
      expect(dup.status).toBe(400);
      expect(dup.body.message).toBe(
        'Service in version "v1" cannot be handled as a Service: strict decoding error: duplicate field "metadata.labels.a", duplicate field "spec.ports[0].port", duplicate field "spec.type"',
      );
    });

    it('Warn (the default) stores without the unknown fields and says so in Warning headers; Ignore is silent', async () => {
      const ns = await server.namespace();
      const warn = await server.api('POST', svcs(ns), svc('warn', { ports: [{ port: 80 }], bogus: true }));
      expect(warn.status).toBe(201);
      expect(warn.headers['warning']).toBe('299 - "unknown field \\"spec.bogus\\""');
      expect(warn.body.spec.bogus).toBeUndefined();
      const ignore = await server.api(
        'POST',
        `${svcs(ns)}?fieldValidation=Ignore`,
        svc('ignore', { ports: [{ port: 80 }], bogus: true }),
      );
      expect(ignore.status).toBe(201);
      expect(ignore.headers['warning']).toBeUndefined();
      const bad = await server.api(
        'POST',
        `${svcs(ns)}?fieldValidation=Loud`,
        svc('x', { ports: [{ port: 80 }] }),
      );
      expect(bad.status).toBe(422);
      expect(bad.body.details.causes).toEqual([
        {
          reason: 'FieldValueNotSupported',
          message: 'Unsupported value: "Loud": supported values: "", "Ignore", "Strict", "Warn"',
          field: 'fieldValidation',
        },
      ]);
    });

    it('Strict on a merge patch is 422 with the patched object in the message', async () => {
      const ns = await server.namespace();
      await server.api('POST', svcs(ns), svc('web', { ports: [{ port: 80 }] }));
      const r = await server.api(
        'PATCH',
        `${svcs(ns)}/web?fieldValidation=Strict`,
        { spec: { bogus: 1 } },
        { contentType: 'application/merge-patch+json' },
      );
      expect(r.status).toBe(422);
      expect(r.body.reason).toBe('Invalid');
      expect(r.body.message).toMatch(
        /^ "" is invalid: patch: Invalid value: "\{.*\}": strict decoding error: unknown field "spec\.bogus"$/,
      );
    });

    it('a wrong JSON type is 400 with the decoder wording', async () => {
      const ns = await server.namespace();
      const r = await server.api('POST', svcs(ns), svc('web', { ports: [{ port: '80' }] }));
      expect(r.status).toBe(400);
      expect(r.body.reason).toBe('BadRequest');
      expect(r.body.message).toMatch(
        /^Service in version "v1" cannot be handled as a Service: json: cannot unmarshal /,
      );
      // The rest names Go's struct and type on a real server; kubesim has no Go types (documented).
      if (server.kind === 'kube-apiserver')
        expect(r.body.message).toBe(
          'Service in version "v1" cannot be handled as a Service: json: cannot unmarshal string into Go struct field ServicePort.spec.ports.port of type int32',
        );
      else expect(r.body.message).toMatch(/: json: cannot unmarshal spec\.ports\.0\.port: /);
    });

    it('invalid Service specs: 422 Invalid, the apimachinery wording, one cause per field path', async () => {
      const ns = await server.namespace();
      const cases: { spec: Record<string, unknown>; name?: string; causes: string[] }[] = [
        { spec: {}, causes: ['FieldValueRequired spec.ports: Required value'] },
        {
          spec: { ports: [{ port: 0 }, { port: 70000, name: 'b' }] },
          causes: [
            'FieldValueRequired spec.ports[0].name: Required value',
            'FieldValueInvalid spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive',
            // targetPort defaults to port, and is validated too.
            'FieldValueInvalid spec.ports[0].targetPort: Invalid value: 0: must be between 1 and 65535, inclusive',
            'FieldValueInvalid spec.ports[1].port: Invalid value: 70000: must be between 1 and 65535, inclusive',
            'FieldValueInvalid spec.ports[1].targetPort: Invalid value: 70000: must be between 1 and 65535, inclusive',
          ],
        },
        {
          spec: { type: 'Bogus', ports: [{ port: 80 }] },
          causes: [
            'FieldValueNotSupported spec.type: Unsupported value: "Bogus": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"',
          ],
        },
        {
          spec: { type: 'ExternalName', externalName: 'Not_A_Host' },
          causes: [
            "FieldValueInvalid spec.externalName: Invalid value: \"Not_A_Host\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
          ],
        },
        {
          spec: { ports: [{ port: 80, protocol: 'HTTP' }] },
          causes: [
            'FieldValueNotSupported spec.ports[0].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"',
          ],
        },
        {
          name: 'Bad_Name',
          spec: { ports: [{ port: 80 }] },
          causes: [
            "FieldValueInvalid metadata.name: Invalid value: \"Bad_Name\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
          ],
        },
      ];
      for (const [i, c] of cases.entries()) {
        const name = c.name ?? `bad-${i}`;
        const r = await server.api('POST', svcs(ns), svc(name, c.spec));
        expect(r.status, JSON.stringify(r.body)).toBe(422);
        expect(r.body).toMatchObject({
          kind: 'Status',
          reason: 'Invalid',
          code: 422,
          details: { name, kind: 'Service' },
        });
        const causes = r.body.details.causes.map(
          (x: { reason: string; field: string; message: string }) => `${x.reason} ${x.field}: ${x.message}`,
        );
        expect(causes, JSON.stringify(c.spec)).toEqual(c.causes);
        const joined = c.causes.map((x) => x.slice(x.indexOf(' ') + 1));
        expect(r.body.message).toBe(
          `Service "${name}" is invalid: ${joined.length === 1 ? joined[0] : `[${joined.join(', ')}]`}`,
        );
      }
    });

    it('the primary cluster IP is immutable; a change to ExternalName drops it', async () => {
      const ns = await server.namespace();
      const created = await server.api('POST', svcs(ns), svc('web', { ports: [{ port: 80 }] }));
      const ip = created.body.spec.clusterIP;
      const other = ip.endsWith('.7') ? ip.replace(/\.7$/, '.8') : ip.replace(/\.\d+$/, '.7');
      const put = await server.api('PUT', `${svcs(ns)}/web`, {
        ...created.body,
        spec: { ...created.body.spec, clusterIP: other, clusterIPs: [other] },
      });
      expect(put.status).toBe(422);
      expect(put.body.details.causes).toContainEqual({
        reason: 'FieldValueInvalid',
        message: `Invalid value: ["${other}"]: may not change once set`,
        field: 'spec.clusterIPs[0]',
      });
      const toAlias = await server.api(
        'PATCH',
        `${svcs(ns)}/web`,
        { spec: { type: 'ExternalName', externalName: 'example.com', ports: null } },
        { contentType: 'application/merge-patch+json' },
      );
      expect(toAlias.status, JSON.stringify(toAlias.body)).toBe(200);
      expect(toAlias.body.spec.clusterIP).toBeUndefined();
      expect(toAlias.body.spec.clusterIPs).toBeUndefined();
      expect(toAlias.body.spec.ipFamilies).toBeUndefined();
    });
  });
}
