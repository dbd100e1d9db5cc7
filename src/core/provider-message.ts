/**
 * A provider's error message as the client may read it. Providers quote what only the operator
 * should see: a part of the gateway's key ("Incorrect API key provided: sk-proj-****1234"), the
 * operator's organization or project ("Rate limit reached for gpt-4o in organization org-…"),
 * a Google project number ("consumer 'projects/123456789'"). Each is replaced by a mark of what it
 * was; the rest of the message, which tells the client what happened, is kept.
 */
const SECRETS: readonly (readonly [RegExp, string])[] = [
  // OpenAI and Anthropic keys, whole or partly masked (sk-…, sk-proj-…, sk-ant-…).
  [/\bsk-[A-Za-z0-9_*.-]{4,}/g, '[key]'],
  // Google API keys.
  [/\bAIza[A-Za-z0-9_-]{10,}/g, '[key]'],
  [/\bBearer\s+\S+/gi, 'Bearer [key]'],
  // OpenAI organizations and projects.
  [/\borg-[A-Za-z0-9]{6,}/g, '[organization]'],
  [/\bproj_[A-Za-z0-9]{6,}/g, '[project]'],
  // Google Cloud projects, by number or by name in a resource path.
  [/\bprojects\/[A-Za-z0-9_-]+/g, 'projects/[project]'],
  [/\bproject(?:_number|_id)?[ :=]+'?\d{6,}'?/gi, 'project [project]'],
  // Account, organization and workspace ids written as UUIDs.
  [/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, '[id]'],
];

/** The longest provider message passed on; the rest is cut (an HTML page from a proxy, say). */
const MAX_LENGTH = 500;

export function redactProviderMessage(message: string): string {
  let redacted = message.length > MAX_LENGTH ? `${message.slice(0, MAX_LENGTH)}…` : message;
  for (const [pattern, mark] of SECRETS) redacted = redacted.replace(pattern, mark);
  return redacted;
}
