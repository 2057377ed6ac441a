// The composite status of a set of jobs (GitLab's Gitlab::Ci::Status::Composite): what a pipeline's
// status and a job's prerequisites come to.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compositeStatus } from '../../../src/domain/ci/pipelines/status.ts';

const s = (...items: (string | [string, boolean])[]) =>
  items.map((i) => (Array.isArray(i) ? { status: i[0], allow_failure: i[1] } : { status: i, allow_failure: false }));

test('composite status as GitLab computes it', () => {
  assert.equal(compositeStatus([]), null);
  assert.equal(compositeStatus(s('success', 'success')), 'success');
  assert.equal(compositeStatus(s('success', 'skipped')), 'success');
  assert.equal(compositeStatus(s('skipped', 'skipped')), 'skipped');
  assert.equal(compositeStatus(s(['manual', true])), 'skipped');
  assert.equal(compositeStatus(s('success', ['failed', true])), 'success');
  assert.equal(compositeStatus(s('success', ['canceled', true])), 'success');
  assert.equal(compositeStatus(s('success', 'failed')), 'failed');
  assert.equal(compositeStatus(s('created', 'created')), 'created');
  assert.equal(compositeStatus(s('success', 'created')), 'running');
  assert.equal(compositeStatus(s('pending', 'created')), 'pending');
  assert.equal(compositeStatus(s('running', 'failed')), 'running');
  assert.equal(compositeStatus(s('success', 'manual')), 'manual');
  assert.equal(compositeStatus(s('success', 'scheduled')), 'scheduled');
  assert.equal(compositeStatus(s('canceled', 'success')), 'canceled');
  assert.equal(compositeStatus(s('canceled', 'failed')), 'failed');
  assert.equal(compositeStatus(s('preparing')), 'preparing');
  assert.equal(compositeStatus(s('waiting_for_resource', 'success')), 'waiting_for_resource');
  assert.equal(compositeStatus(s('canceling', 'success')), 'canceling');
  // needs: a skipped need, or a manual one not played, skips
  assert.equal(compositeStatus(s('success', 'skipped'), true), 'skipped');
  assert.equal(compositeStatus(s('success', ['manual', true]), true), 'skipped');
  assert.equal(compositeStatus(s('success', ['failed', true]), true), 'success');
  assert.equal(compositeStatus(s('success', 'manual'), true), 'manual');
});
