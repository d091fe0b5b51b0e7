package greet.peers;

import java.io.IOException;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.apache.catalina.Context;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;

/** The Greetings API on embedded Tomcat 10: a request thread pool of 200, as Spring Boot's. */
public final class TomcatMain {
    static final String PROGRAM = "greet-tomcat";

    public static void main(String[] args) throws Exception {
        Greetings.Options o = Greetings.Options.parse(PROGRAM, args);
        Tomcat tomcat = new Tomcat();
        tomcat.setBaseDir(java.nio.file.Files.createTempDirectory("greet-tomcat").toString());
        Connector connector = new Connector("org.apache.coyote.http11.Http11NioProtocol");
        connector.setPort(o.port);
        connector.setProperty("address", o.host);
        connector.setProperty("maxThreads", String.valueOf(o.threads));
        connector.setProperty("acceptCount", String.valueOf(o.backlog));
        connector.setProperty("maxConnections", "16384");
        tomcat.getService().addConnector(connector);
        tomcat.setConnector(connector);
        Context context = tomcat.addContext("", null);
        Tomcat.addServlet(context, "greetings", new HttpServlet() {
            @Override
            protected void doGet(HttpServletRequest req, HttpServletResponse res) throws IOException {
                Greetings.delay(o.delayMs);
                text(res, Greetings.greeting(req.getParameterValues("name")));
            }
        });
        context.addServletMappingDecoded("/greetings", "greetings");
        // A servlet holds its thread through the delay either way: the thread-per-request
        // endpoint of the Rust servers is this one too.
        context.addServletMappingDecoded("/greetings/blocking", "greetings");
        Tomcat.addServlet(context, "health", new HttpServlet() {
            @Override
            protected void doGet(HttpServletRequest req, HttpServletResponse res) throws IOException {
                text(res, "ok");
            }
        });
        context.addServletMappingDecoded("/health", "health");
        tomcat.start();
        Greetings.onSignal(PROGRAM, () -> {
            try {
                tomcat.stop();
                tomcat.destroy();
            } catch (Exception e) {
                System.err.println(PROGRAM + ": " + e);
            }
        });
        Greetings.listening(PROGRAM, o.host, connector.getLocalPort(), o);
        tomcat.getServer().await();
    }

    static void text(HttpServletResponse res, String body) throws IOException {
        res.setContentType("text/plain;charset=UTF-8");
        res.getWriter().write(body);
    }
}
