/** What the agent loop sees of checkpoints (src/checkpoints/): a port, wired in by src/setup/. */

/** One turn's checkpoints: the tree before its first change, and after its last. */
export interface TurnCheckpoints {
  /**
   * Called before each call that may change the workspace: the first keeps the tree as it was
   * before the turn, later ones keep the tree as the turn has left it so far. Resolves to a note
   * for the user when something was not kept (once per turn); never rejects.
   */
  beforeChange(): Promise<string | undefined>;
  /** The turn's end: keeps the tree as the turn left it, when it changed anything. Never rejects. */
  end(): Promise<void>;
}

export interface CheckpointPort {
  /** The checkpoints of the turn that begins at message `seq` of `sessionId`; `label` is its task. */
  turn(sessionId: string, turn: { seq: number; label: string }): TurnCheckpoints;
}
