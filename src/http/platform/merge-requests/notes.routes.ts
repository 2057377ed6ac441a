// …/notes, …/discussions, …/award_emoji, …/approve, …/unapprove, …/approvals.
import type { FastifyInstance } from 'fastify';
import type { Container } from '../../../container.ts';

export function notesRoutes(_app: FastifyInstance, _c: Container): void {}
