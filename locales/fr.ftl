# Français. Same message ids as en.ftl. CLDR data: fr (https://cldr.unicode.org/).
# Typography (French rules, Imprimerie nationale): a no-break space U+00A0 before ":", a narrow
# no-break space U+202F before ";", "!" and "?" (invisible in most editors; a host test checks
# every French email).

## Dates and times (the dates themselves are CLDR data: src/domain/i18n/cldr.rs)
date-range = { $from } – { $to }
date-from = à partir du { $date }
datetime-local = { $date }, { $time } (heure locale)

## Shared phrases
hi = Bonjour { $name },
hi-no-name = Bonjour,
label-colon = { $label } :
label-hotel = Hôtel
label-booking = Réservation
label-booking-id = Numéro de réservation
label-hcn = Numéro de confirmation de l’hôtel
label-checkin = Arrivée
label-checkout = Départ
label-room = Chambre
label-room-n = Chambre { $n }
label-guests = Voyageurs
label-total = Prix total
label-pnr = Référence de réservation de la compagnie
label-passengers = { $count ->
    [one] Passager
   *[other] Passagers
}
nights = { $count ->
    [one] { $count } nuit
   *[other] { $count } nuits
}
adults = { $count ->
    [one] { $count } adulte
   *[other] { $count } adultes
}
children = { $count ->
    [one] { $count } enfant
   *[other] { $count } enfants
}
instructions-title = Instructions d’arrivée

## Booking confirmation (hotel)
confirmation-subject = Votre séjour à { $hotel } est confirmé
confirmation-heading = Votre séjour est confirmé
confirmation-intro = Merci d’avoir réservé avec { $brand }. Votre séjour à { $hotel } est confirmé.
confirmation-hcn-known = Présentez le numéro de confirmation de l’hôtel à la réception à votre arrivée, et gardez votre numéro de réservation à portée de main si vous nous contactez.
confirmation-hcn-later = Le numéro de confirmation propre à l’hôtel arrive généralement dans un e-mail séparé quelques jours avant votre arrivée. Gardez votre numéro de réservation à portée de main si vous nous contactez.
confirmation-closing = Nous vous souhaitons un excellent voyage.

## Hotel confirmation number
hcn-subject = Votre numéro de confirmation de { $hotel }
hcn-heading = Votre numéro de confirmation de l’hôtel
hcn-intro = { $hotel } a confirmé votre réservation dans son propre système. Votre numéro de confirmation de l’hôtel est :
hcn-intro-text = { $hotel } a confirmé votre réservation dans son propre système.
hcn-line = Votre numéro de confirmation de l’hôtel : { $number }
hcn-show = Présentez ce numéro à la réception à votre arrivée : c’est grâce à lui que l’hôtel retrouve votre réservation.
hcn-booking-id = Votre numéro de réservation chez { $brand } reste { $id }. Gardez-le à portée de main si vous nous contactez.

## Arrival guide
arrival-subject = Votre séjour à { $hotel } commence dans 3 jours
arrival-heading = Votre séjour commence dans 3 jours
arrival-intro = Votre séjour à { $hotel } commence le { $date }. Voici tout ce dont vous avez besoin pour votre arrivée.
arrival-before-title = Avant de partir
arrival-bring-id = Une pièce d’identité avec photo ou un passeport pour l’enregistrement
arrival-bring-card = Une carte de paiement pour les extras : de nombreux hôtels bloquent une caution à l’arrivée
arrival-bring-booking-id = Votre numéro de réservation
arrival-bring-both = Votre numéro de réservation et le numéro de confirmation de l’hôtel
arrival-late = Si vos projets changent ou si vous pensez arriver tard, répondez simplement à cet e-mail.
arrival-closing = Bon voyage !

## Check-in day
checkin-subject = Aujourd’hui : arrivée à { $hotel }
checkin-heading = C’est le jour de votre arrivée
checkin-intro = Aujourd’hui, vous arrivez à { $hotel }. Nous vous souhaitons un bon voyage.
checkin-ready = Préparez votre pièce d’identité et une carte de paiement pour la réception. Si vous avez du retard, répondez à cet e-mail et nous préviendrons l’hôtel.

## Thank you
thanks-subject = Merci d’avoir séjourné à { $hotel }
thanks-heading = Merci
thanks-intro = Merci d’avoir séjourné à { $hotel }. Nous espérons que vous avez passé un excellent moment et que votre retour se passe bien.
thanks-reply = Si quelque chose concernant votre séjour mérite notre attention, répondez simplement à cet e-mail.
thanks-regards = Bien cordialement,

## Booking updated
updated-subject = Votre réservation à { $hotel } a été modifiée
updated-heading = Votre réservation a été modifiée
updated-intro = Votre réservation à { $hotel } a été modifiée.
updated-what-changed = Voici ce qui a changé :
updated-before = Avant
updated-now = Maintenant
updated-current = Votre réservation désormais
updated-unexpected = Si ce changement ne correspond pas à ce que vous attendiez, répondez à cet e-mail en indiquant votre numéro de réservation.
field-hotel-id = Code de l’hôtel
field-hotel-name = Hôtel
field-checkin = Arrivée
field-checkout = Départ
field-room-name = Chambre { $n }
field-room-board = Pension, chambre { $n }
field-room-adults = Adultes, chambre { $n }
field-room-children = Enfants, chambre { $n }
field-guests = Voyageurs
field-holder = Réservation au nom de
field-hotel-confirmation-number = Numéro de confirmation de l’hôtel
field-segment-flight-number = Numéro de vol, vol { $n }
field-segment-origin = Départ de, vol { $n }
field-segment-destination = Arrivée à, vol { $n }
field-segment-departure = Départ, vol { $n }
field-segment-arrival = Arrivée, vol { $n }
field-passengers = Passagers

## Flights
flight-subject = Votre vol { $from } → { $to } est confirmé
flight-heading = Votre vol est confirmé
flight-intro = Merci d’avoir réservé avec { $brand }. Votre vol de { $from } à { $to } est confirmé.
flight-list-title = { $count ->
    [one] Votre vol
   *[other] Vos vols
}
flight-number = Vol { $number }
flight-departs = Départ
flight-arrives = Arrivée
flight-local-times = Toutes les heures sont exprimées en heure locale de l’aéroport concerné.
flight-checkin-pnr = Utilisez la référence de réservation de la compagnie pour vous enregistrer auprès d’elle.
flight-rules = Vérifiez les règles d’enregistrement et de bagages de la compagnie avant de partir, et assurez-vous que les noms des passagers correspondent à leurs documents de voyage.
flight-closing = Nous vous souhaitons un bon vol.
flight-changed-subject = Important : les horaires de votre vol ont changé
flight-changed-heading = Les horaires de votre vol ont changé
flight-changed-intro = La compagnie a modifié les horaires de votre réservation de vol. Consultez les nouveaux horaires ci-dessous.
flight-changed-intro-pnr = La compagnie a modifié les horaires de votre réservation de vol { $pnr }. Consultez les nouveaux horaires ci-dessous.
flight-changed-new = Nouveaux horaires
flight-changed-previous = Anciens horaires
flight-changed-todo = Que faire
flight-changed-reply = Répondez à cet e-mail pour accepter les nouveaux horaires. S’ils ne vous conviennent pas, contactez-nous en répondant à cet e-mail et nous étudierons les solutions avec vous.
flight-booking-title = Réservation de vol { $id }

## Cancellation
cancelled-subject = Votre réservation { $id } est annulée
cancelled-heading = Votre réservation est annulée
cancelled-intro = Votre réservation { $id } a été annulée.
cancelled-fee = Frais d’annulation
cancelled-refund = Montant remboursé
cancelled-fee-applies = Des frais d’annulation s’appliquent à cette réservation.
cancelled-questions = Si vous ne vous attendiez pas à cette annulation ou si vous avez des questions, répondez à cet e-mail en indiquant votre numéro de réservation.

## Booking not confirmed
notice-title-cancelled = Votre réservation a été annulée
notice-title-not-confirmed = Nous n’avons pas pu confirmer votre réservation
notice-cancelled = Nous sommes désolés : votre réservation a été annulée. Le prestataire n’a pas pu la maintenir ; ne voyagez donc pas sur la foi de la confirmation que nous vous avons envoyée.
notice-cancelled-trip = Nous sommes désolés : votre réservation pour { $trip } a été annulée. Le prestataire n’a pas pu la maintenir ; ne voyagez donc pas sur la foi de la confirmation que nous vous avons envoyée.
notice-not-confirmed = Nous sommes désolés : nous n’avons pas pu confirmer votre réservation. Le prestataire n’a pas pu la finaliser ; il n’existe donc aucune réservation à votre nom.
notice-not-confirmed-trip = Nous sommes désolés : nous n’avons pas pu confirmer votre réservation pour { $trip }. Le prestataire n’a pas pu la finaliser ; il n’existe donc aucune réservation à votre nom.
notice-book-again = Si vous souhaitez toujours voyager, vous pouvez réserver à nouveau ; les prix et les disponibilités ont pu changer. Pour toute question, répondez simplement à cet e-mail.
refund-not-charged = Aucun montant ne vous a été débité.
refund-unknown = Si un paiement a été prélevé pour cette réservation, il sera intégralement remboursé ; nous vous écrirons si nous avons besoin de quoi que ce soit.
refund-refunding = Votre paiement est en cours de remboursement sur la carte utilisée. Les remboursements apparaissent généralement sur votre relevé sous 5 à 10 jours ouvrés.
refund-refunding-amount = Votre paiement de { $amount } est en cours de remboursement sur la carte utilisée. Les remboursements apparaissent généralement sur votre relevé sous 5 à 10 jours ouvrés.
refund-refunded = Votre paiement a été remboursé sur la carte utilisée. Il apparaît généralement sur votre relevé sous 5 à 10 jours ouvrés.
refund-refunded-amount = Votre paiement de { $amount } a été remboursé sur la carte utilisée. Il apparaît généralement sur votre relevé sous 5 à 10 jours ouvrés.
refund-arranging = Nous organisons votre remboursement et vous le confirmerons par e-mail dès qu’il aura été effectué.

## Unfinished checkout
checkout-trip-stay = votre séjour, { $dates }
checkout-subject = Votre réservation n’a pas abouti — rien n’a été débité
checkout-heading = Votre réservation n’a pas abouti
checkout-intro = Vous avez commencé une réservation avec { $brand }, mais elle n’a pas abouti, et rien n’a été débité.
checkout-intro-trip = Vous avez commencé une réservation avec { $brand } pour { $trip }, mais elle n’a pas abouti, et rien n’a été débité.
checkout-reasons = Si vous avez changé d’avis, vous n’avez rien à faire. Si vous vouliez réserver, voici les deux raisons les plus fréquentes pour lesquelles un paiement par carte n’aboutit pas, et comment y remédier :
checkout-retry = Réessayer votre réservation
checkout-retry-prices = Les prix et les disponibilités peuvent changer : vérifiez-les à nouveau lorsque vous réessayez. Si autre chose s’est mal passé, répondez simplement à cet e-mail.
declined-funds-subject = Votre paiement n’est pas passé : fonds ou crédit insuffisants
declined-security-subject = Votre paiement a été bloqué par un contrôle de sécurité
declined-intro = Votre réservation avec { $brand } n’a pas abouti, et rien n’a été débité. Nous avons vérifié le paiement, et voici ce qui l’a bloqué :
declined-intro-trip = Votre réservation avec { $brand } pour { $trip } n’a pas abouti, et rien n’a été débité. Nous avons vérifié le paiement, et voici ce qui l’a bloqué :
declined-questions = Les prix et les disponibilités peuvent changer : vérifiez-les à nouveau lorsque vous réessayez. Pour toute question, répondez simplement à cet e-mail.
fix-funds-title = Fonds ou crédit disponible insuffisants
fix-funds-why = Le solde ou le plafond de la carte ne couvre peut-être pas le montant total du séjour, ou un plafond de dépenses journalier a peut-être été atteint.
fix-funds-how = Comment y remédier : utilisez une autre carte, ou demandez à votre banque de relever le plafond ou d’approvisionner cette carte, puis réessayez.
fix-security-title = Un contrôle de sécurité de votre banque ou du prestataire de paiement
fix-security-why = Les banques et les prestataires de paiement bloquent parfois un paiement qui leur paraît inhabituel, par exemple un montant plus élevé, un paiement à l’étranger ou un premier achat auprès d’un nouveau marchand. Cela vous protège et ne dit rien de négatif sur vous.
fix-security-how = Comment y remédier : validez le paiement dans l’application de votre banque, ou appelez le numéro au dos de votre carte pour indiquer que vous souhaitez effectuer ce paiement, puis réessayez.

## Marketing footer and unsubscribe pages
marketing-footer = Ceci est un e-mail marketing de { $brand }.
marketing-unsubscribe-link = Se désabonner des e-mails marketing
marketing-unsubscribe-one-click = en un clic.
marketing-unsubscribe-text = Se désabonner des e-mails marketing en un clic : { $url }
marketing-bookings-still = Les e-mails concernant vos réservations continueront de vous parvenir.
unsubscribe-title = Se désabonner des e-mails marketing
unsubscribe-question = Se désabonner des e-mails marketing ?
unsubscribe-who = { $email } ne recevra plus d’e-mails marketing de { $brand }.
unsubscribe-bookings-still = Les e-mails concernant vos réservations (confirmations, modifications, informations d’arrivée) continueront de vous parvenir.
unsubscribe-button = Se désabonner
unsubscribe-nothing-yet = L’ouverture de cette page n’a rien changé.
unsubscribe-retry-title = Veuillez réessayer plus tard
unsubscribe-retry = Votre demande n’a pas pu être traitée pour le moment. Rien n’a été modifié.
unsubscribe-invalid-title = Ce lien de désabonnement n’est pas valide
unsubscribe-invalid-cut = Il a peut-être été tronqué ou modifié. Rouvrez le lien depuis l’e-mail, ou copiez-le en entier. Rien n’a été modifié.
unsubscribe-invalid-list = Ce n’est pas un lien de désabonnement des e-mails marketing. Rien n’a été modifié.
unsubscribe-post-title = Rien n’a été modifié
unsubscribe-post-only = Une demande de désabonnement doit être un POST avec le corps List-Unsubscribe=One-Click (RFC 8058). Utilisez le bouton de la page de désabonnement.
unsubscribe-done-title = Votre désabonnement est enregistré
unsubscribe-done = { $email } ne recevra plus d’e-mails marketing. Les e-mails concernant vos réservations continueront de vous parvenir.
unsubscribe-done-brand = { $email } ne recevra plus d’e-mails marketing de { $brand }. Les e-mails concernant vos réservations continueront de vous parvenir.

## The owner's answer to a guest's message (the owner's own words go between these)
answer-subject = À propos de votre réservation { $ref }
answer-about = Votre réservation { $ref }
answer-reply = Pour nous écrire à nouveau, répondez simplement à cet e-mail.

## Board types
board-room-only = Logement seul
board-breakfast = Petit-déjeuner inclus
board-half-board = Demi-pension
board-full-board = Pension complète
board-all-inclusive = Tout compris

## The calendar attachment
calendar-note-add = { $count ->
    [one] Le fichier de calendrier joint ajoute cette réservation à votre agenda. Nos prochains e-mails la mettront à jour, et une annulation la supprimera.
   *[other] Les fichiers de calendrier joints ajoutent chaque vol à votre agenda. Nos prochains e-mails les mettront à jour, et une annulation les supprimera.
}
calendar-note-cancel = { $count ->
    [one] Le fichier de calendrier joint retire de votre agenda la réservation annulée.
   *[other] Les fichiers de calendrier joints retirent de votre agenda les vols annulés.
}
calendar-note-update-remove = Les fichiers de calendrier joints mettent à jour vos vols dans votre agenda et retirent ceux qui n’existent plus.
