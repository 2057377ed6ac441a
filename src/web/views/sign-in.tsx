// The sign-in page inside the layout. The form keeps its field names (`user[login]`, `user[password]`)
// and its own double-submit CSRF token (there is no session yet); `redirect_to` rides along hidden.
import type { WebCtx } from '../context.ts';
import type { SafeHtml } from '../jsx/jsx-runtime.ts';
import { Layout } from './layout.tsx';

export interface SignInProps {
  ctx: WebCtx;
  csrf: string;
  alert?: string;
  login?: string;
  /** password sign-in is off: only the message */
  disabled?: boolean;
  /** a local path to return to after signing in */
  redirectTo?: string;
}

export function SignInPage(p: SignInProps): SafeHtml {
  return (
    <Layout ctx={p.ctx} title="Sign in">
      <div class="sign-in-box mx-auto mt-4">
        <h1 class="h2 mb-3">Sign in</h1>
        {p.alert ? (
          <p class="alert flash flash-error mb-3" role="alert">
            {p.alert}
          </p>
        ) : null}
        {p.disabled ? null : (
          <form method="post" action="/users/sign_in" accept-charset="UTF-8" class="Box p-3">
            <input type="hidden" name="authenticity_token" value={p.csrf} />
            {p.redirectTo ? <input type="hidden" name="redirect_to" value={p.redirectTo} /> : null}
            <div class="FormControl mb-3">
              <label class="FormControl-label" for="user_login">
                Username or primary email
              </label>
              <input
                class="form-control width-full"
                id="user_login"
                name="user[login]"
                autocomplete="username"
                autocapitalize="off"
                required
                autofocus
                value={p.login ?? ''}
              />
            </div>
            <div class="FormControl mb-3">
              <label class="FormControl-label" for="user_password">
                Password
              </label>
              <input class="form-control width-full" id="user_password" type="password" name="user[password]" autocomplete="current-password" required />
            </div>
            <button type="submit" class="btn btn-primary btn-block">
              Sign in
            </button>
          </form>
        )}
      </div>
    </Layout>
  );
}
