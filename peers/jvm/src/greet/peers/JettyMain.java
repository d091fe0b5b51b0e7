package greet.peers;

import java.io.IOException;

import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.AbstractHandler;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/** The Greetings API on Jetty 9: a request thread pool of 200 (8 kept idle), as Spring Boot's. */
public final class JettyMain {
    static final String PROGRAM = "greet-jetty";

    public static void main(String[] args) throws Exception {
        Greetings.Options o = Greetings.Options.parse(PROGRAM, args);
        QueuedThreadPool pool = new QueuedThreadPool(o.threads, Math.min(8, o.threads));
        pool.setName("greet-jetty");
        Server server = new Server(pool);
        ServerConnector connector = new ServerConnector(server);
        connector.setHost(o.host);
        connector.setPort(o.port);
        connector.setAcceptQueueSize(o.backlog);
        server.addConnector(connector);
        server.setHandler(new AbstractHandler() {
            @Override
            public void handle(String target, Request base, HttpServletRequest req,
                    HttpServletResponse res) throws IOException {
                base.setHandled(true);
                if (!"GET".equals(req.getMethod()) && !"HEAD".equals(req.getMethod())) {
                    res.setStatus(405);
                    return;
                }
                switch (target) {
                    case "/greetings":
                    // A servlet holds its thread through the delay either way: the
                    // thread-per-request endpoint of the Rust servers is this one too.
                    case "/greetings/blocking":
                        Greetings.delay(o.delayMs);
                        text(res, Greetings.greeting(req.getParameterValues("name")));
                        break;
                    case "/health":
                        text(res, "ok");
                        break;
                    default:
                        res.setStatus(404);
                        text(res, "not found");
                }
            }
        });
        server.setStopTimeout(o.shutdownTimeoutSecs * 1000L);
        server.start();
        Greetings.onSignal(PROGRAM, () -> {
            try {
                server.stop();
            } catch (Exception e) {
                System.err.println(PROGRAM + ": " + e);
            }
        });
        Greetings.listening(PROGRAM, o.host, connector.getLocalPort(), o);
        server.join();
    }

    static void text(HttpServletResponse res, String body) throws IOException {
        res.setContentType("text/plain;charset=UTF-8");
        res.getWriter().write(body);
    }
}
