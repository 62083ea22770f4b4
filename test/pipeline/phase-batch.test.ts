/** The batching policy alone: claims ordered by phase, a full batch turns, a dry phase gives way. */
import { expect, it } from 'vitest';
import { PhaseBatch } from '../../src/pipeline/phase-batch.js';

const CODE = ['approved', 'pending', 'coded'];
const REVIEW = ['approved', 'coded', 'pending'];

it('takes `size` coder rounds, then `size` reviews; approved tasks always first', () => {
  const batch = new PhaseBatch(2);
  expect(batch.order()).toEqual(CODE);
  batch.took('coding');
  expect(batch.order()).toEqual(CODE);
  batch.took('committing');
  batch.took('coding');
  expect(batch.order()).toEqual(REVIEW);
  batch.took('verifying');
  batch.took('verifying');
  expect(batch.order()).toEqual(CODE);
});

it('follows the queue when the phase has nothing to claim, counting from there', () => {
  const batch = new PhaseBatch(3);
  batch.took('coding');
  // No pending task was claimable (they wait on coded ones): a review was claimed instead.
  batch.took('verifying');
  expect(batch.order()).toEqual(REVIEW);
  batch.took('verifying');
  batch.took('verifying');
  expect(batch.order()).toEqual(CODE);
});

it('alternates with size 1', () => {
  const batch = new PhaseBatch(1);
  batch.took('coding');
  expect(batch.order()).toEqual(REVIEW);
  batch.took('verifying');
  expect(batch.order()).toEqual(CODE);
});
