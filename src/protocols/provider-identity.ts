/**
 * Which upstream response and model answered, as a result or a stream's start carries them: each
 * field only when the wire gave it (tolerant parsing: compatible servers leave either out).
 */
export interface ProviderIdentity {
  readonly providerResponseId?: string;
  readonly providerModel?: string;
}

export function providerIdentity(responseId: string | undefined, model: string | undefined): ProviderIdentity {
  return { ...(responseId !== undefined && { providerResponseId: responseId }), ...(model !== undefined && { providerModel: model }) };
}
