/** A unified diff with added, removed and hunk lines marked (colours come from the stylesheet). */
export function Diff({ text }: { text: string }) {
  return (
    <pre class="diff">
      {text.split('\n').map((line, i) => {
        const kind = line.startsWith('@@')
          ? 'hunk'
          : line.startsWith('+++') || line.startsWith('---')
            ? 'file'
            : line.startsWith('+')
              ? 'add'
              : line.startsWith('-')
                ? 'del'
                : 'ctx';
        return (
          <span class={`line ${kind}`} key={i}>
            {line}
            {'\n'}
          </span>
        );
      })}
    </pre>
  );
}
