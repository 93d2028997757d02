// `trainbench-cli launch-script MODEL --serve`: N replicas of `trainbench-cli serve MODEL` on
// Kubernetes, as a Deployment and a Service, and unless --no-auth a Secret with a bearer token every
// request must present (mounted as a file for --auth-token-file). Every string the user controls
// reaches the manifest through app/quote/quote.h (YAML scalars) or as a k8sName, never pasted raw.
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "app/cli/commands.h"
#include "app/quote/quote.h"
#include "app/run/exitcodes.h"
#include "engine/io/atomicfilewriter.h"
#include "engine/util/errors.h"

namespace trainbench::cli {

namespace {

// Where each pod sees the token Secret's key "token".
constexpr const char* kTokenFolder = "/var/run/trainbench/serve-token";

std::string serveManifest(const LaunchScriptArgs& a) {
    const std::string modelName =
        a.modelName.empty() ? app::k8sName(std::filesystem::path(a.file).stem().string(), 40) : a.modelName;
    const std::string name = app::yamlString(app::k8sName(modelName, 40) + "-serving", "the Deployment's name");
    const std::string label = app::yamlString(app::k8sName(modelName, 40), "the app label");
    // The server listens on every address of the pod (the Service reaches it there); options in their
    // --key=value form and MODEL after "--", so that no value can be read as an option.
    std::string args = "[\"serve\", " + app::yamlString("--bind=0.0.0.0", "--bind") + ", \"--port=" +
                       std::to_string(a.port) + "\", " + app::yamlString("--model-name=" + modelName, "--model-name");
    const bool auth = !a.noAuth;
    const std::string secret = app::yamlString(app::k8sName(modelName, 40) + "-serving-token", "the Secret's name");
    if (auth) args += ", " + app::yamlString(std::string("--auth-token-file=") + kTokenFolder + "/token", "--auth-token-file");
    for (const std::string& s : a.serveArgs) args += ", " + app::yamlString(s, "--serve-arg");
    args += ", \"--\", " + app::yamlString(a.file, "MODEL") + "]";
    const std::string probe = app::yamlString("/v1/models/" + modelName, "the model's status path");
    std::ostringstream s;
    s << "# trainbench: " << a.replicas << " replica(s) of `trainbench-cli serve` for "
      << app::yamlString(a.file, "MODEL") << " (TF Serving's REST API on port " << a.port << ").\n"
      << "# Written by `trainbench-cli launch-script --serve`; apply with kubectl. The Service is ClusterIP: reachable\n";
    if (auth)
        s << "# inside the cluster only, and every request must carry the Secret's token (Authorization: Bearer\n"
          << "# <token>); keep this file private. Nothing is encrypted: TLS belongs at an ingress (docs/security.md).\n"
          << tokenSecretDocument(secret);
    else
        s << "# inside the cluster only; --no-auth: the server answers anyone who reaches it (docs/security.md).\n";
    s << "apiVersion: apps/v1\n"
      << "kind: Deployment\n"
      << "metadata:\n"
      << "  name: " << name << "\n"
      << "spec:\n"
      << "  replicas: " << a.replicas << "\n"
      << "  selector:\n"
      << "    matchLabels: {app: " << label << "}\n"
      << "  template:\n"
      << "    metadata:\n"
      << "      labels: {app: " << label << "}\n"
      << "    spec:\n"
      << "      containers:\n"
      << "        - name: \"serve\"\n"
      << "          image: " << app::yamlString(a.image, "--image") << "\n"
      << "          command: [\"trainbench-cli\"]\n"
      << "          args: " << args << "\n"
      << "          ports:\n"
      << "            - {name: \"http\", containerPort: " << a.port << "}\n"
      // A probe cannot present the Secret's token (its headers are literals): with a token, the
      // probes connect only; the server listens once its model is loaded.
      << "          readinessProbe:\n"
      << "            " << (auth ? "tcpSocket: {port: " : "httpGet: {path: " + probe + ", port: ") << a.port << "}\n"
      << "            periodSeconds: 5\n"
      << "          livenessProbe:\n"
      << "            " << (auth ? "tcpSocket: {port: " : "httpGet: {path: " + probe + ", port: ") << a.port << "}\n"
      << "            initialDelaySeconds: 10\n"
      << "            periodSeconds: 10\n"
      << "          resources:\n"
      << "            requests: {cpu: \"" << a.cpu << "\"}\n"
      << "            limits: {cpu: \"" << a.cpu << "\"}\n";
    if (!a.modelClaim.empty() || auth) {
        const std::string folder = std::filesystem::path(a.file).parent_path().string();
        s << "          volumeMounts:\n";
        if (!a.modelClaim.empty())
            s << "            - {name: \"model\", mountPath: " << app::yamlString(folder.empty() ? "/" : folder, "MODEL's folder")
              << ", readOnly: true}\n";
        if (auth) s << "            - {name: \"serve-token\", mountPath: \"" << kTokenFolder << "\", readOnly: true}\n";
        s << "      volumes:\n";
        if (!a.modelClaim.empty())
            s << "        - name: \"model\"\n"
              << "          persistentVolumeClaim: {claimName: " << app::yamlString(a.modelClaim, "--model-claim")
              << ", readOnly: true}\n";
        if (auth)
            s << "        - name: \"serve-token\"\n"
              // Kubernetes' default mode (0644): readable by an image that runs serve as another
              // user than the volume's owner; the pod holds nothing but the server.
              << "          secret: {secretName: " << secret << "}\n";
    }
    s << "---\n"
      << "apiVersion: v1\n"
      << "kind: Service\n"
      << "metadata:\n"
      << "  name: " << name << "\n"
      << "spec:\n"
      << "  type: ClusterIP\n"
      << "  selector: {app: " << label << "}\n"
      << "  ports:\n"
      << "    - {name: \"http\", port: " << a.port << ", targetPort: " << a.port << "}\n";
    return s.str();
}

}  // namespace

int serveManifestCommand(const LaunchScriptArgs& args) {
    std::string text;
    try {
        text = serveManifest(args);
    } catch (const app::QuoteError& e) {
        std::fprintf(stderr, "launch-script: %s\n", e.what());
        return kExitUsage;
    }
    if (args.output.empty()) {
        std::fputs(text.c_str(), stdout);
        return kExitOk;
    }
    try {
        // With a token (its Secret), the manifest is for the user's eyes only.
        engine::writeFileAtomically(args.output, text, {.what = "Kubernetes manifest", .mode = args.noAuth ? 0644u : 0600u});
    } catch (const engine::FileWriteError& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return kExitIo;
    }
    std::fprintf(stderr, "wrote %s (Deployment of %d serve replica(s) and its Service%s)\n", args.output.c_str(),
                 args.replicas, args.noAuth ? "; no token: --no-auth" : ", and the Secret of their bearer token");
    return kExitOk;
}

}  // namespace trainbench::cli
