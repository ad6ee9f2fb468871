// Entry point: the page shell (masthead, navigation) and the routed screen, each screen its own
// lazily loaded chunk so the first screen's JavaScript stays small.
import '@patternfly/react-core/dist/styles/base.css';
import './app.css';
import { Suspense, lazy, useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { Masthead, MastheadBrand, MastheadContent, MastheadMain, MastheadToggle, Nav, NavItem, NavList, Page, PageSidebar, PageSidebarBody, PageToggleButton, SkipToContent } from '@patternfly/react-core';
import { href, parseRoute, type Route } from './router';
import { Loading } from './common';
import { RegistrySwitcher } from './switcher';
import { UserBadge } from './user';

const RegisteredModels = lazy(() => import('./screens/RegisteredModels'));
const ModelDetail = lazy(() => import('./screens/ModelDetail'));
const Catalog = lazy(() => import('./screens/Catalog'));
const CatalogModel = lazy(() => import('./screens/CatalogModel'));
const McpServers = lazy(() => import('./screens/McpServers'));
const Deployments = lazy(() => import('./screens/Deployments'));
const InferenceServiceDetail = lazy(() => import('./screens/InferenceServiceDetail'));
const Settings = lazy(() => import('./screens/Settings'));
const Permissions = lazy(() => import('./screens/Permissions'));
const CatalogSources = lazy(() => import('./screens/CatalogSources'));
const TransferJobs = lazy(() => import('./screens/TransferJobs'));

/** The route, and how many times the URL changed by navigation (a link, Back, a typed URL). */
function useRoute(): [Route, number] {
  const [state, setState] = useState(() => ({ route: parseRoute(window.location.hash), n: 0 }));
  useEffect(() => {
    const on = () => setState((s) => ({ route: parseRoute(window.location.hash), n: s.n + 1 }));
    window.addEventListener('hashchange', on);
    return () => window.removeEventListener('hashchange', on);
  }, []);
  return [state.route, state.n];
}

function Screen({ route, nav }: { route: Route; nav: number }) {
  switch (route.screen) {
    case 'models':
      return <RegisteredModels route={route} />;
    case 'model':
      return <ModelDetail id={route.id} version={route.version} deploy={route.deploy} />;
    case 'catalog':
      // the page writes its filters into the URL itself (replaceState, no hashchange); a
      // navigation (the Catalog link, Back) starts it afresh from the URL
      return <Catalog key={nav} route={route} />;
    case 'catalogModel':
      return <CatalogModel key={nav} source={route.source} name={route.name} perf={route.perf} />;
    case 'mcp':
      return <McpServers route={route} />;
    case 'deployments':
      return <Deployments ns={route.ns} />;
    case 'transfers':
      return <TransferJobs ns={route.ns} />;
    case 'isvc':
      return <InferenceServiceDetail ns={route.ns} name={route.name} />;
    case 'settings':
      return <Settings />;
    case 'catalogSources':
      return <CatalogSources />;
    case 'permissions':
      return <Permissions ns={route.ns} name={route.name} />;
    case 'notFound':
      return (
        <section className="mp-section">
          <h1>Page not found</h1>
          <p>There is no page at {route.path}.</p>
        </section>
      );
  }
}

const SECTIONS = [
  { key: 'models', label: 'Registered models', to: '#/models', match: ['models', 'model'] },
  { key: 'catalog', label: 'Catalog', to: '#/catalog', match: ['catalog', 'catalogModel'] },
  { key: 'mcp', label: 'MCP servers', to: '#/mcp', match: ['mcp'] },
  { key: 'deployments', label: 'Deployments', to: '#/deployments', match: ['deployments', 'isvc'] },
  { key: 'transfers', label: 'Transfer jobs', to: '#/transfers', match: ['transfers'] },
  { key: 'settings', label: 'Registry settings', to: '#/settings', match: ['settings', 'permissions'] },
  { key: 'catalogSources', label: 'Catalog sources', to: '#/settings/catalog', match: ['catalogSources'] },
];

// PatternFly's own breakpoint for the sidebar: below it the navigation is an overlay behind the
// masthead's toggle, above it always shown.
const WIDE = 1200;

function App() {
  const [route, nav] = useRoute();
  const [mobile, setMobile] = useState(() => window.innerWidth < WIDE);
  const [navOpen, setNavOpen] = useState(() => window.innerWidth >= WIDE);
  // crossing the breakpoint: shown when wide, folded away when narrow
  useEffect(() => setNavOpen(!mobile), [mobile]);
  // on a narrow screen, following a link closes the overlay navigation
  useEffect(() => {
    if (mobile) setNavOpen(false);
  }, [route, mobile]);
  useEffect(() => {
    const s = SECTIONS.find((x) => x.match.includes(route.screen));
    document.title = `${s ? s.label : 'Not found'} · modelplane`;
  }, [route.screen]);
  const masthead = (
    <Masthead display={{ default: 'inline' }}>
      <MastheadMain>
        <MastheadToggle>
          <PageToggleButton isHamburgerButton isSidebarOpen={navOpen} onSidebarToggle={() => setNavOpen((o) => !o)} aria-label="Navigation" aria-expanded={navOpen} aria-controls="mp-nav" id="mp-nav-toggle" />
        </MastheadToggle>
        <MastheadBrand>
          <a className="mp-brand" href={href({ screen: 'models', q: '', state: '', sort: '', owner: '' })}>
            modelplane
          </a>
        </MastheadBrand>
      </MastheadMain>
      <MastheadContent>
        <RegistrySwitcher />
        <UserBadge />
      </MastheadContent>
    </Masthead>
  );
  const sidebar = (
    <PageSidebar isSidebarOpen={navOpen} id="mp-nav">
      <PageSidebarBody>
        <Nav aria-label="Sections">
          <NavList>
            {SECTIONS.map((s) => (
              <NavItem key={s.key} to={s.to} isActive={s.match.includes(route.screen)}>
                {s.label}
              </NavItem>
            ))}
          </NavList>
        </Nav>
      </PageSidebarBody>
    </PageSidebar>
  );
  return (
    <Page
      masthead={masthead}
      sidebar={sidebar}
      onPageResize={(_e, { mobileView }: { mobileView: boolean }) => setMobile(mobileView)}
      skipToContent={<SkipToContent href="#main">Skip to content</SkipToContent>} mainContainerId="main">
      <Suspense fallback={<Loading what="page" />}>
        <Screen route={route} nav={nav} />
      </Suspense>
    </Page>
  );
}

const el = document.getElementById('root');
if (el) createRoot(el).render(<App />);
