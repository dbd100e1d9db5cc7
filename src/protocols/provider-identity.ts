/**
 * Which upstream response and model answered, as a result or a stream's start carries them: each
 * field only when the wire gave it (tolerant parsing: compatible servers leave either out).
 */
export interface ProviderIdentity {
  readonly providerResponseId?: string;
  readonly providerModel?: string;
}

export function providerIdentity(responseId: string | null | undefined, model: string | null | undefined): ProviderIdentity {
  return { ...(responseId != null && { providerResponseId: responseId }), ...(model != null && { providerModel: model }) };
}
