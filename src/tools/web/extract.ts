/**
 * A page's main content as Markdown: Mozilla's Readability (Firefox's reader view) picks the
 * article out of a light DOM (linkedom), and turndown writes the Markdown. Both are imported on
 * first use, so they cost nothing at start-up.
 */

export interface Extracted {
  title: string;
  markdown: string;
  /** Characters of visible text found: next to nothing means a page built by JavaScript. */
  textLength: number;
  /** The page runs scripts, so a browser may find more than this. */
  scripted: boolean;
  /** How the text was found: the article alone, or the whole body when no article stood out. */
  method: 'readability' | 'body';
}

/** Markers of an anti-bot interstitial (Cloudflare, hCaptcha, generic "enable JavaScript" walls). */
const CHALLENGE_MARKERS = [
  /<title>\s*(just a moment|attention required|access denied|verify you are human)/i,
  /challenge-platform|cf-chl-|__cf_chl_|hcaptcha\.com|g-recaptcha|turnstile/i,
];

export function looksLikeChallenge(status: number, html: string): boolean {
  if (![403, 429, 503].includes(status) && !/<title>\s*just a moment/i.test(html)) return false;
  return CHALLENGE_MARKERS.some((marker) => marker.test(html));
}

export async function htmlToMarkdown(html: string, url: string): Promise<Extracted> {
  const [{ parseHTML }, { Readability }] = await Promise.all([
    import('linkedom'),
    import('@mozilla/readability'),
  ]);
  // A <base> makes Readability turn relative links and images into absolute ones.
  const { document } = parseHTML(withBase(html, url));
  const title = (document.querySelector('title')?.textContent ?? '').trim();
  const scripted = document.querySelector('script') !== null;
  const article = new Readability(document.cloneNode(true) as never, { charThreshold: 200 }).parse();
  const articleText = article?.textContent?.trim() ?? '';
  if (article?.content && articleText.length > 0) {
    const markdown = await toMarkdown(article.content);
    return {
      title: article.title?.trim() || title,
      markdown,
      textLength: articleText.length,
      scripted,
      method: 'readability',
    };
  }
  for (const node of document.querySelectorAll('script, style, noscript, template, svg, iframe'))
    node.remove();
  const body = document.querySelector('body');
  const text = (body?.textContent ?? '').replace(/\s+/g, ' ').trim();
  return {
    title,
    markdown: body ? await toMarkdown(body.innerHTML) : '',
    textLength: text.length,
    scripted,
    method: 'body',
  };
}

function withBase(html: string, url: string): string {
  const base = `<base href="${url.replace(/"/g, '%22')}">`;
  if (/<base\s/i.test(html)) return html;
  if (/<head[^>]*>/i.test(html)) return html.replace(/<head[^>]*>/i, (head) => `${head}${base}`);
  // A fragment: linkedom builds a document only around a whole page.
  if (!/<html[\s>]/i.test(html))
    return `<!doctype html><html><head>${base}</head><body>${html}</body></html>`;
  return html.replace(/<html[^>]*>/i, (open) => `${open}<head>${base}</head>`);
}

async function toMarkdown(html: string): Promise<string> {
  const { default: TurndownService } = await import('turndown');
  const service = new TurndownService({
    headingStyle: 'atx',
    codeBlockStyle: 'fenced',
    bulletListMarker: '-',
    emDelimiter: '*',
  });
  service.remove(['script', 'style', 'noscript', 'template', 'iframe', 'form', 'button']);
  // Inline images cost tokens and tell a text model nothing; a linked image keeps its address.
  service.addRule('images', {
    filter: 'img',
    replacement: (_content, node) => {
      const img = node as { getAttribute(name: string): string | null };
      const src = img.getAttribute('src') ?? '';
      const alt = (img.getAttribute('alt') ?? '').replace(/\s+/g, ' ').trim();
      if (src === '' || src.startsWith('data:') || src.length > 500) return alt ? `[image: ${alt}]` : '';
      return `![${alt}](${src})`;
    },
  });
  return tidy(service.turndown(html));
}

/** Collapses the blank-line runs, trailing spaces and padding that converted layouts leave behind. */
function tidy(markdown: string): string {
  return (
    markdown
      .split('\n')
      // turndown pads list markers to four columns ("-   item"); one space says the same for fewer tokens.
      .map((line) => line.replace(/\s+$/, '').replace(/^(\s*)(-|\d+\.)\s{2,}/, '$1$2 '))
      .join('\n')
      .replace(/\n{3,}/g, '\n\n')
      .trim()
  );
}
