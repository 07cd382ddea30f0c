import { z } from 'zod';
import { ageCol, col, nameCol, optStr, view, type Printer } from './columns.js';
import { since } from './duration.js';

/**
 * The ConfigMap, Secret and ServiceAccount printers (printConfigMap, printSecret,
 * printServiceAccount): a real server prints their counts, not the default NAME/CREATED AT.
 */

const keyCount = (m: unknown): number => (m && typeof m === 'object' ? Object.keys(m).length : 0);
const dataView = z.looseObject({
  data: z.unknown().optional(),
  binaryData: z.unknown().optional(),
  type: optStr,
});
const DATA_DOC = {
  configMap:
    "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process.",
  secret:
    "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. The serialized form of the secret data is a base64 encoded string, representing the arbitrary (possibly non-string) data value here. Described in https://tools.ietf.org/html/rfc4648#section-4",
};

const configMapPrinter: Printer = {
  columns: [nameCol(), col('Data', DATA_DOC.configMap), ageCol()],
  cells(obj, now) {
    const cm = view(dataView, obj);
    return [
      obj.metadata.name,
      keyCount(cm?.data) + keyCount(cm?.binaryData),
      since(obj.metadata.creationTimestamp, now),
    ];
  },
};

const secretPrinter: Printer = {
  columns: [nameCol(), col('Type', 'The type of the secret'), col('Data', DATA_DOC.secret), ageCol()],
  cells(obj, now) {
    const s = view(dataView, obj);
    return [obj.metadata.name, s?.type ?? '', keyCount(s?.data), since(obj.metadata.creationTimestamp, now)];
  },
};

const serviceAccountPrinter: Printer = {
  columns: [
    nameCol(),
    col(
      'Secrets',
      'Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use.',
    ),
    ageCol(),
  ],
  cells(obj, now) {
    const secrets = (obj as { secrets?: unknown }).secrets;
    return [
      obj.metadata.name,
      Array.isArray(secrets) ? secrets.length : 0,
      since(obj.metadata.creationTimestamp, now),
    ];
  },
};

export const CONFIG_PRINTERS: Record<string, Printer> = {
  '/ConfigMap': configMapPrinter,
  '/Secret': secretPrinter,
  '/ServiceAccount': serviceAccountPrinter,
};
