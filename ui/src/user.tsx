// The signed-in user in the masthead (GET /api/v1/user), or why there is none.
import { currentUser } from './api';
import { useAsync } from './common';

export function UserBadge() {
  const [u] = useAsync(() => currentUser(), []);
  if (u.state === 'loading') return <span className="mp-user">…</span>;
  if (u.state === 'error')
    return (
      <span className="mp-user" role="status">
        Not signed in: {u.error.message}
      </span>
    );
  return (
    <span className="mp-user" data-testid="user">
      Signed in as {u.data.userId}
    </span>
  );
}
