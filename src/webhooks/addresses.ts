/**
 * Which addresses a webhook may reach. A webhook URL is chosen by a customer but requested by the
 * gateway, from inside the operator's network: one that points at a loopback, private or otherwise
 * non-public address would let a customer probe that network (server-side request forgery). Such
 * addresses are refused when an endpoint is registered and again at every connection, unless the
 * operator sets `webhooks.allow_private_addresses` (docs/webhooks.md).
 *
 * The ranges are IANA's special-purpose registries, every entry not globally reachable:
 * https://www.iana.org/assignments/iana-ipv4-special-registry/ and
 * https://www.iana.org/assignments/iana-ipv6-special-registry/. node:net's BlockList parses the
 * addresses, and matches an IPv4-mapped IPv6 address (`::ffff:127.0.0.1`) against the IPv4 ranges.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { errors, type GatewayError } from '../core/errors.ts';

const IPV4_RANGES: readonly (readonly [string, number])[] = [
  ['0.0.0.0', 8], // "this network", the unspecified address among them
  ['10.0.0.0', 8], // private (RFC 1918)
  ['100.64.0.0', 10], // shared address space: carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata services live here)
  ['172.16.0.0', 12], // private (RFC 1918)
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation (TEST-NET-1)
  ['192.88.99.0', 24], // 6to4 relay anycast (deprecated)
  ['192.168.0.0', 16], // private (RFC 1918)
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation (TEST-NET-2)
  ['203.0.113.0', 24], // documentation (TEST-NET-3)
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and the broadcast address
];

const IPV6_RANGES: readonly (readonly [string, number])[] = [
  ['::', 96], // the unspecified address, loopback, and the deprecated IPv4-compatible addresses
  ['64:ff9b::', 96], // NAT64: would reach an IPv4 address through a translator
  ['64:ff9b:1::', 48], // local-use NAT64
  ['100::', 64], // discard-only
  ['2001::', 23], // IETF protocol assignments (Teredo among them)
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4: would reach an IPv4 address through a relay
  ['3fff::', 20], // documentation
  ['5f00::', 16], // segment routing
  ['fc00::', 7], // unique-local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
];

const NON_PUBLIC = new BlockList();
for (const [network, prefix] of IPV4_RANGES) NON_PUBLIC.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of IPV6_RANGES) NON_PUBLIC.addSubnet(network, prefix, 'ipv6');

/** True for an address on the public internet; false for a non-public one, or for text that is no address. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  return !NON_PUBLIC.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** The host of a URL as an address when it is one (`[::1]` → `::1`), else null. */
export function literalAddress(hostname: string): string | null {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return isIP(bare) === 0 ? null : bare;
}

/** Resolves a host name to every address it has. */
export type Resolver = (hostname: string) => Promise<readonly LookupAddress[]>;

export const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) => dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) => (error ? reject(error) : resolve(addresses))));

/** The first of `addresses` that is not public, if any. */
function firstNonPublic(addresses: readonly LookupAddress[]): string | undefined {
  return addresses.find((entry) => !isPublicAddress(entry.address))?.address;
}

export interface WebhookUrlPolicy {
  /** `webhooks.allow_private_addresses`: any address may be reached. */
  readonly allowPrivateAddresses: boolean;
  readonly resolve?: Resolver;
}

/**
 * Checks a webhook URL at registration: http or https, no credentials, and (unless the policy
 * allows any address) a host that is a public address or resolves only to public ones. Returns the
 * URL as the WHATWG parser writes it; throws a GatewayError (400) naming `param` otherwise.
 */
export async function checkWebhookUrl(text: string, param: string, policy: WebhookUrlPolicy): Promise<string> {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw errors.invalidValue(param, `'${param}' must be an absolute http or https URL.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw errors.invalidValue(param, `'${param}' must be an http or https URL.`);
  if (url.username !== '' || url.password !== '') {
    throw errors.invalidValue(param, `'${param}' must not carry credentials: the signature of each delivery authenticates the gateway.`);
  }
  if (policy.allowPrivateAddresses) return url.href;
  const literal = literalAddress(url.hostname);
  if (literal !== null) {
    if (!isPublicAddress(literal)) throw errors.webhookAddressRefused(param, url.hostname, literal);
    return url.href;
  }
  let addresses: readonly LookupAddress[];
  try {
    addresses = await (policy.resolve ?? systemResolver)(url.hostname);
  } catch {
    throw errors.invalidValue(param, `The host '${url.hostname}' of '${param}' could not be resolved.`);
  }
  const refused = firstNonPublic(addresses);
  if (refused !== undefined) throw errors.webhookAddressRefused(param, url.hostname, refused);
  return url.href;
}

/**
 * The address check at delivery, where it cannot be raced: the resolver of every connection the
 * delivery agent opens (undici hands `lookup` to net.connect and tls.connect), so the address
 * checked is the address connected to, and a DNS answer that changes between a check and the
 * connection (DNS rebinding) changes nothing. A host written as an address is never looked up;
 * the sender checks those itself (refusedLiteral).
 */
export function checkedLookup(resolve: Resolver = systemResolver): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (addresses) => {
        const family = options.family === 4 || options.family === 'IPv4' ? 4 : options.family === 6 || options.family === 'IPv6' ? 6 : 0;
        const usable = family === 0 ? addresses : addresses.filter((entry) => entry.family === family);
        const refused = firstNonPublic(addresses);
        // net.connect destroys the socket with whatever error the lookup gives; only the message is read.
        if (refused !== undefined) return callback(errors.webhookAddressRefused(null, hostname, refused) as Error as NodeJS.ErrnoException, '', 0);
        if (usable.length === 0) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '', 0);
        if (options.all) return callback(null, [...usable]);
        callback(null, usable[0].address, usable[0].family);
      },
      (error: NodeJS.ErrnoException) => callback(error, '', 0),
    );
  };
}

/** The refusal of a URL whose host is a non-public address written out, or null when it may be reached. */
export function refusedLiteral(url: URL): GatewayError | null {
  const literal = literalAddress(url.hostname);
  if (literal === null || isPublicAddress(literal)) return null;
  return errors.webhookAddressRefused(null, url.hostname, literal);
}
