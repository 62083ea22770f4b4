import { useEffect, useState } from 'preact/hooks';
import { api } from './api.js';

export interface Project {
  name: string;
  path: string;
  model: string | null;
  last_used: boolean;
}

interface Props {
  /** The chosen project's folder; '' for the gateway's own. */
  value: string;
  onChange(path: string): void;
  onError(message: string): void;
}

/** The web UI's `/project`: new sessions start in the chosen project's folder, with its defaults. */
export function ProjectPicker({ value, onChange, onError }: Props) {
  const [projects, setProjects] = useState<Project[]>([]);
  useEffect(() => {
    api<{ projects: Project[] }>('/api/projects').then(
      (r) => setProjects(r.projects),
      (err: unknown) => onError((err as Error).message),
    );
  }, [onError]);
  if (projects.length === 0) return null;
  return (
    <select
      class="project"
      aria-label="Project"
      title="New sessions start in this project"
      value={value}
      onChange={(e) => onChange((e.target as HTMLSelectElement).value)}
    >
      <option value="">Gateway folder</option>
      {projects.map((p) => (
        <option key={p.name} value={p.path}>
          {p.name}
          {p.model ? ` · ${p.model}` : ''}
        </option>
      ))}
    </select>
  );
}

/** The body that creates a session: in the chosen project's folder, or the gateway's. */
export function sessionBody(project: string): { workspace?: string } {
  return project ? { workspace: project } : {};
}
