/** One entry of the management API's stable error catalogue. */
export interface ErrorCodeInfo {
  /** HTTP status the code is answered with. */
  status: number;
  /** Short description for the catalogue (docs/errors.md); the response `msg` says more. */
  title: string;
}

export type ErrorCatalogue = Record<`ERR_${number}`, ErrorCodeInfo>;
