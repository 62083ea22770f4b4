import DOMPurify from 'dompurify';
import { marked } from 'marked';

/**
 * Model output as HTML: Markdown through marked, then DOMPurify, which keeps no scripts, event
 * handlers or styles. Images are dropped (a remote one would tell a server the page was read),
 * links open in a new tab with no referrer or opener.
 */
const purify = DOMPurify();
purify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer');
  }
});

export function renderMarkdown(text: string): string {
  const html = marked.parse(text, { async: false, gfm: true, breaks: false });
  return purify.sanitize(html, {
    FORBID_TAGS: [
      'img',
      'picture',
      'source',
      'video',
      'audio',
      'svg',
      'math',
      'style',
      'form',
      'input',
      'iframe',
    ],
    FORBID_ATTR: ['style', 'srcset'],
  });
}
