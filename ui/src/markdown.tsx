// A model card: Markdown rendered by react-markdown (remark, with GitHub's tables and task lists
// from remark-gfm) straight to React elements. Raw HTML in the Markdown is dropped, never parsed
// (skipHtml): no script, no event handler, no inline style, no frame or form can come out of it,
// and the browser never even sees the hostile markup (its CSP would report it). The tree then goes
// through rehype-sanitize (GitHub's schema: allowed elements, attributes and URL protocols), and
// links keep only http(s) and mailto targets (no `javascript:`), opened in a new tab without a
// referrer. Images are left out: a README's images would make every visitor's browser call
// whatever host the card names, and the console's CSP (img-src 'self' data:) refuses images from
// other origins anyway. Headings move two levels down, under the page's h1 and the
// "Model card" h2.
import type { ComponentPropsWithoutRef } from 'react';
import ReactMarkdown, { type Components } from 'react-markdown';
import remarkGfm from 'remark-gfm';
import rehypeSanitize from 'rehype-sanitize';

/** The link target kept: absolute web and mail addresses only ('' = none). */
export function safeHref(href: string | undefined | null): string {
  const h = (href ?? '').trim();
  return /^(https?:|mailto:)/i.test(h) ? h : '';
}

function Link({ href, children }: ComponentPropsWithoutRef<'a'>) {
  const h = safeHref(href);
  if (!h) return <span className="mp-dead-link">{children}</span>;
  return (
    <a href={h} target="_blank" rel="noopener noreferrer">
      {children}
    </a>
  );
}

const components: Components = {
  a: ({ href, children }) => <Link href={href}>{children}</Link>,
  h1: ({ children }) => <h3>{children}</h3>,
  h2: ({ children }) => <h4>{children}</h4>,
  h3: ({ children }) => <h5>{children}</h5>,
  h4: ({ children }) => <h6>{children}</h6>,
  h5: ({ children }) => <h6>{children}</h6>,
};

export function Markdown({ text, label }: { text: string; label: string }) {
  return (
    <section className="mp-markdown pf-v6-c-content" aria-label={label} data-testid="model-card">
      <ReactMarkdown remarkPlugins={[remarkGfm]} rehypePlugins={[rehypeSanitize]} skipHtml disallowedElements={['img']} unwrapDisallowed={false} components={components}>
        {text}
      </ReactMarkdown>
    </section>
  );
}
