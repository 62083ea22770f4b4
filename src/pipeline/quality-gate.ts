/**
 * The quality gate (LAO's post-coder validation): placeholder and code-smell checks on the files a
 * coder round wrote, after the mechanical verifier passed and before the reviewer. Files are read
 * on the host as text only (nothing runs). `pipeline.quality_gate_mode` says what the findings do:
 * `block` sends the task back to the coder on a placeholder (major), `warn` records them for the
 * review and the report and lets the task go on, `off` skips the gate.
 *
 * The checks are line patterns, not parsers: they look for what an unfinished small model's work
 * leaves (a `TODO: implement`, a body that is only `pass`, `NotImplementedError`, a function that
 * only returns a constant, blocks of commented-out code), and say where.
 */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { isWithin } from '../sandbox/workspace.js';
import { realpathLoose } from '../util/real-path.js';
import type { Finding } from './types.js';

export type QualityGateMode = 'off' | 'warn' | 'block';

/** Files larger than this are not read. */
const READ_LIMIT = 1024 * 1024;
/** Findings reported per file, so one bad file cannot flood the review. */
const PER_FILE = 5;

const CODE_EXT = new Set([
  '.py',
  '.js',
  '.mjs',
  '.cjs',
  '.ts',
  '.tsx',
  '.jsx',
  '.go',
  '.rs',
  '.java',
  '.kt',
  '.rb',
  '.php',
  '.c',
  '.h',
  '.cc',
  '.cpp',
  '.cs',
  '.swift',
  '.sh',
]);

const PLACEHOLDER =
  /\b(?:TODO|FIXME|XXX)\b[:\s-]*(?:implement|fill in|add (?:the )?(?:logic|implementation|code)|your code here)|\bplaceholder implementation\b|\byour code here\b/i;
const NOT_IMPLEMENTED =
  /\braise\s+NotImplementedError\b|\bthrow\s+new\s+Error\(\s*['"`][^'"`]*not\s+implemented|\bunimplemented!\(|\btodo!\(|\bpanic\(\s*"not implemented/i;
const PY_DEF = /^(\s*)(?:async\s+)?def\s+\w+\s*\(.*\)\s*(?:->\s*[^:]+)?:\s*$/;
const CONSTANT = String.raw`(?:None|True|False|null|undefined|true|false|-?\d+(?:\.\d+)?|""|''|\[\]|\{\}|nil)`;
const PY_CONST_RETURN = new RegExp(String.raw`^\s*return\s+${CONSTANT}\s*$`);
const C_CONST_BODY = new RegExp(
  String.raw`^\s*(?:(?:export\s+)?(?:async\s+)?function\s+\w+|(?:public|private|protected|static|\s)*\w[\w<>\[\]]*\s+\w+)\s*\([^)]*\)[^{;]*\{\s*return\s+${CONSTANT}\s*;?\s*\}\s*$`,
);
const C_EMPTY_BODY = /^\s*(?:export\s+)?(?:async\s+)?function\s+\w+\s*\([^)]*\)[^{;]*\{\s*\}\s*$/;
/** A comment line whose text reads as code: an assignment, a call ending a statement, a keyword line. */
const COMMENTED_CODE =
  /^\s*(?:#|\/\/)\s*(?:(?:if|for|while|return|def|class|function|const|let|var|import|from)\b.*[:;{(=]|[\w.[\]]+\s*=[^=].*|[\w.]+\(.*\)\s*;?)\s*$/;
const COMMENTED_RUN = 3;

/** The gate's findings on `files` (relative to the workspace); files outside it or missing are skipped. */
export async function qualityFindings(workspace: string, files: string[]): Promise<Finding[]> {
  const findings: Finding[] = [];
  for (const file of [...new Set(files)]) {
    if (!CODE_EXT.has(path.extname(file).toLowerCase())) continue;
    const text = await readWithin(workspace, file);
    if (text !== undefined) findings.push(...checkText(file, text).slice(0, PER_FILE));
  }
  return findings;
}

/** The findings of one file's text (exported for the unit test's table). */
export function checkText(file: string, text: string): Finding[] {
  const lines = text.split(/\r?\n/);
  const out: Finding[] = [];
  const at = (i: number) => `${file}:${i + 1}`;
  let commented = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (PLACEHOLDER.test(line))
      out.push({ severity: 'major', file, message: `${at(i)}: placeholder left: ${line.trim()}` });
    else if (NOT_IMPLEMENTED.test(line))
      out.push({ severity: 'major', file, message: `${at(i)}: not implemented: ${line.trim()}` });
    const def = PY_DEF.exec(line);
    if (def) {
      const body = pythonBody(lines, i + 1, def[1]!.length);
      if (body.length === 1 && /^\s*(?:pass|\.\.\.)\s*$/.test(body[0]!))
        out.push({ severity: 'major', file, message: `${at(i)}: the body is only \`${body[0]!.trim()}\`` });
      else if (body.length === 1 && PY_CONST_RETURN.test(body[0]!))
        out.push({ severity: 'minor', file, message: `${at(i)}: a stub returning a constant` });
    }
    if (C_CONST_BODY.test(line))
      out.push({ severity: 'minor', file, message: `${at(i)}: a stub returning a constant` });
    else if (C_EMPTY_BODY.test(line))
      out.push({ severity: 'major', file, message: `${at(i)}: an empty function body` });
    commented = COMMENTED_CODE.test(line) ? commented + 1 : 0;
    if (commented === COMMENTED_RUN)
      out.push({ severity: 'minor', file, message: `${at(i - COMMENTED_RUN + 1)}: commented-out code` });
  }
  return out;
}

/** The lines of a Python body after a `def` at `indent`: docstring lines and blank lines left out. */
function pythonBody(lines: string[], from: number, indent: number): string[] {
  const body: string[] = [];
  let docstring = false;
  for (let i = from; i < lines.length; i++) {
    const line = lines[i]!;
    if (!line.trim() || /^\s*#/.test(line)) continue;
    if (line.length - line.trimStart().length <= indent) break;
    const t = line.trim();
    if (docstring) {
      if (t.includes('"""') || t.includes("'''")) docstring = false;
      continue;
    }
    if (/^(?:"""|''')/.test(t)) {
      const quote = t.slice(0, 3);
      if (!(t.length > 3 && t.endsWith(quote))) docstring = true;
      continue;
    }
    body.push(line);
  }
  return body;
}

async function readWithin(workspace: string, file: string): Promise<string | undefined> {
  const abs = path.resolve(workspace, file);
  const real = await realpathLoose(abs);
  if (!isWithin(workspace, abs) || !real.ok || !real.exists || !isWithin(workspace, real.real))
    return undefined;
  try {
    const info = await stat(real.real);
    if (!info.isFile() || info.size > READ_LIMIT) return undefined;
    return await readFile(real.real, 'utf8');
  } catch {
    return undefined;
  }
}

/** Whether the findings stop the task in `mode`: a placeholder (major or worse) in block mode. */
export function blocks(mode: QualityGateMode, findings: Finding[]): boolean {
  return mode === 'block' && findings.some((f) => f.severity !== 'minor');
}

/** A finding as one line, for feedback, the review and the log. */
export function findingLine(f: Finding): string {
  return `[${f.severity}] ${f.message}`;
}
