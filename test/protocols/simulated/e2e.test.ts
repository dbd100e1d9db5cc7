/**
 * The official Anthropic SDK against the gateway's messages endpoint and the official OpenAI SDK
 * against its responses endpoint, served by the built-in simulated provider: the scenarios that
 * need no injected failure.
 */
import { messagesEndToEndSuite } from '../../simulators/messages-e2e.ts';
import { responsesEndToEndSuite } from '../../simulators/responses-e2e.ts';

messagesEndToEndSuite({ kind: 'simulated' });
responsesEndToEndSuite({ kind: 'simulated' });
